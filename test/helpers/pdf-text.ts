/**
 * The text of an uncompressed PDF as pdfkit writes it: each text-showing operator's strings
 * (hex, in the standard fonts' single-byte encoding), kerning left out, one string per operator.
 * Enough to read a roll-forward back in any environment; pdftotext is used where installed.
 */
export function pdfTextRuns(pdf: Buffer): string[] {
  const runs: string[] = [];
  for (const match of pdf.toString('latin1').matchAll(/\[((?:<[0-9a-f]*>\s*-?[\d.]*\s*)+)\]\s*TJ/gi)) {
    runs.push([...match[1]!.matchAll(/<([0-9a-f]*)>/gi)].map((m) => Buffer.from(m[1]!, 'hex').toString('latin1')).join(''));
  }
  return runs;
}
