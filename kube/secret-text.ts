// A value of a Secret's `data`, as text: base64-decoded, trimmed (a trailing newline of a file
// turned into a Secret is no part of a URL or a token). Undefined when the key is absent. Pure.
export function secretText(data: Record<string, string> | undefined, key: string): string | undefined {
  const v = data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8').trim();
}
