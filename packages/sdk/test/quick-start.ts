/** The quick start of packages/sdk/README.md: the ```ts block after its `<!-- quick-start -->` marker. */
export function quickStart(readme: string): string {
  const match = /<!-- quick-start -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error("packages/sdk/README.md has no ```ts block after <!-- quick-start -->");
  return match[1]!;
}
