// A unified diff (`diff -u`) of two texts, line by line. Pure. Specs are a few hundred lines: the
// longest common subsequence by dynamic programming is fast enough and needs no dependency.

const CONTEXT = 3;

type Op = { kind: ' ' | '-' | '+'; line: string; a: number; b: number };

function ops(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) out.push({ kind: ' ', line: a[i]!, a: i++, b: j++ });
    // Removals before additions, as diff -u writes a replaced line.
    else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push({ kind: '-', line: a[i]!, a: i++, b: j });
    else out.push({ kind: '+', line: b[j]!, a: i, b: j++ });
  }
  return out;
}

const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/** The diff's lines (headers, hunks), or [] when the texts are equal. */
export function unifiedDiff(before: string, after: string, labels: { from: string; to: string }): string[] {
  const all = ops(lines(before), lines(after));
  const changed = all.map((o, k) => (o.kind !== ' ' ? k : -1)).filter((k) => k >= 0);
  if (changed.length === 0) return [];
  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - CONTEXT);
    let end = Math.min(all.length, changed[k]! + CONTEXT + 1);
    // Changes closer than two contexts apart share a hunk.
    while (k + 1 < changed.length && changed[k + 1]! - CONTEXT <= end) end = Math.min(all.length, changed[++k]! + CONTEXT + 1);
    k++;
    const hunk = all.slice(start, end);
    const aLines = hunk.filter((o) => o.kind !== '+').length;
    const bLines = hunk.filter((o) => o.kind !== '-').length;
    const aStart = aLines ? hunk.find((o) => o.kind !== '+')!.a + 1 : hunk[0]!.a;
    const bStart = bLines ? hunk.find((o) => o.kind !== '-')!.b + 1 : hunk[0]!.b;
    out.push(`@@ -${aStart},${aLines} +${bStart},${bLines} @@`, ...hunk.map((o) => `${o.kind}${o.line}`));
  }
  return out;
}
