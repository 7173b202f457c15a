import PDFDocument from 'pdfkit';
import { formatLocalTime } from '../business-date/local-time.js';
import type { RollForwardRow } from '../db/evidence-pack.repository.js';
import { toMajorUnits } from '../money/format-amount.js';

/** A date's sign-off as the roll-forward prints it. */
export interface RollForwardSignoff {
  id: number;
  businessDate: string;
  preparedBy: string;
  preparedAt: Date;
  approvedBy: string | null;
  approvedAt: Date | null;
}

export interface RollForwardInput {
  dates: readonly string[];
  timezone: string;
  /** The rows in account, currency, date order, a page at a time. */
  rows: AsyncIterable<RollForwardRow[]>;
  signoffs: readonly RollForwardSignoff[];
}

const COLUMNS = [
  { title: 'Date', width: 70 },
  { title: 'Opening', width: 110 },
  { title: 'Movement', width: 110 },
  { title: 'Closing (gateway/bank)', width: 120 },
  { title: "Books' closing", width: 100 },
  { title: 'Open items', width: 90 },
  { title: 'Unexplained remainder', width: 100 },
  { title: 'Status', width: 90 },
] as const;
const LEFT = 36;
const ROW = 13;

/** An amount in minor units as the reports print it (major units, the row's decimals); blank when absent. */
function amount(value: string | null, scale: number | null): string {
  if (value === null) return '';
  if (!/^-?\d+$/.test(value) || scale === null) return value;
  return toMajorUnits(BigInt(value), scale);
}

/**
 * roll-forward.pdf: per account and currency a row per date (opening, movement and closing of the
 * gateway or bank balance beside the books' closing, and the unexplained remainder), then each
 * date's sign-off with times in RECON_TIMEZONE. The document's dates come from the data (the first
 * date covered), never the clock, and its streams are left uncompressed, so the same data gives the
 * same bytes and its text can be read back. Streamed page by page.
 */
/** Unread PDF output the writer lets pile up before it waits for the reader. */
const PDF_BUFFER_BYTES = 1 << 20;

export function renderRollForward(input: RollForwardInput): AsyncIterable<Buffer> {
  const first = input.dates[0] ?? '1970-01-01';
  const fixed = new Date(`${first}T00:00:00Z`);
  const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: LEFT, compress: false, info: { Title: `Roll-forward ${first} to ${input.dates.at(-1) ?? first}`, Producer: 'wallet-recon', Creator: 'wallet-recon', CreationDate: fixed, ModDate: fixed } });
  doc.font('Helvetica');
  const bottom = () => doc.page.height - doc.page.margins.bottom - ROW;
  let y = LEFT;
  const line = (cells: readonly string[], bold = false) => {
    if (y > bottom()) {
      doc.addPage();
      y = LEFT;
    }
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8);
    let x = LEFT;
    cells.forEach((cell, i) => {
      const width = COLUMNS[i]?.width ?? 110;
      doc.text(cell, x, y, { width: width - 6, lineBreak: false, align: i === 0 || i === COLUMNS.length - 1 ? 'left' : 'right' });
      x += width;
    });
    y += ROW;
  };
  const heading = (text: string, size: number) => {
    if (y > bottom() - 2 * ROW) {
      doc.addPage();
      y = LEFT;
    }
    doc.font('Helvetica-Bold').fontSize(size).text(text, LEFT, y, { lineBreak: false });
    y += size + 6;
  };

  // pdfkit pushes its output whether or not anyone reads it: a month of rows written in one go
  // would sit in its buffer whole. Past this much unread output the writer waits for the archive
  // (which itself waits for the disk) to take it, so memory stays bounded by the page, not the month.
  const drained = async () => {
    while (doc.readableLength > PDF_BUFFER_BYTES) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  const write = async () => {
    try {
      await writeBody();
    } finally {
      doc.end();
    }
  };
  const writeBody = async () => {
    heading(`Roll-forward ${first} to ${input.dates.at(-1) ?? first}`, 14);
    doc.font('Helvetica').fontSize(8).text(`Dates: ${input.dates.join(', ')}. Amounts in major units of each currency. Times in ${input.timezone}.`, LEFT, y, { lineBreak: false });
    y += ROW * 2;
    let account: string | undefined;
    let currency: string | null | undefined;
    for await (const page of input.rows) {
      for (const r of page) {
        if (r.account !== account) {
          account = r.account;
          currency = undefined;
          y += 4;
          heading(`Account ${r.account}`, 11);
        }
        if (r.currency !== currency) {
          currency = r.currency;
          heading(`${r.account} ${r.currency ?? '(no currency)'}`, 9);
          line(COLUMNS.map((c) => c.title), true);
        }
        line([r.business_date, amount(r.previous_balance, r.scale), amount(r.movement, r.scale), amount(r.gateway_balance, r.scale), amount(r.expected_balance, r.scale), amount(r.items_total, r.scale), amount(r.unexplained, r.scale), r.status]);
        if (doc.readableLength > PDF_BUFFER_BYTES) await drained();
      }
    }
    y += ROW;
    heading('Sign-offs', 11);
    const local = (d: Date | null) => (d === null ? '' : formatLocalTime(d, input.timezone));
    line(['Date', 'Sign-off', 'Prepared by', 'Prepared at', 'Approved by', 'Approved at'], true);
    for (const s of input.signoffs) line([s.businessDate, `#${s.id}`, s.preparedBy, local(s.preparedAt), s.approvedBy ?? '', local(s.approvedAt)]);
  };
  const written = write();
  return (async function* () {
    // The document's own stream is read as it is written; an error while writing ends it.
    const failed = written.then(
      () => undefined,
      (error: unknown) => error,
    );
    for await (const chunk of doc as AsyncIterable<Buffer>) yield chunk;
    const error = await failed;
    if (error !== undefined) throw error;
  })();
}
