/** Pieces the capabilities' OpenAPI schemas share. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const timestamp = { type: "string", format: "date-time" };
export const nullableTimestamp = { type: ["string", "null"], format: "date-time" };

/** A page's `nextCursor`. */
export const nextCursor = { type: ["string", "null"], description: "Pass back as `cursor`; null on the last page." };
