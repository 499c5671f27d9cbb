/** The console is everything under this prefix of the gateway. */
export const CONSOLE_PREFIX = "/console";

export const isConsolePath = (path: string): boolean =>
  path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`);

/**
 * Where the console may send a browser (after sign-in, a console link's `redirectPath`): a path
 * under /console with an optional query, never another origin (no //, no backslash, no control
 * characters), at most 512 characters.
 */
export function isConsoleLocation(location: string): boolean {
  return (
    location.length <= 512 &&
    isConsolePath(location.split(/[?#]/)[0]!) &&
    !location.includes("\\") &&
    !location.includes("//") &&
    ![...location].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
  );
}
