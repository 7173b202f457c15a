import { BALANCE_FIELD_SET, resolveColumns, type ColumnMap, type FieldSet } from './column-map.js';

/** One data row: the 1-based line (or spreadsheet row) and its cells as read. */
export interface TableRow {
  line: number;
  cells: unknown[];
}

/** A row as read, before validation; messages name it by its unit ("books.csv line 3", "books.xlsx row 3"). */
export interface RawRow {
  line: number;
  unit: 'line' | 'row';
  fields: Record<string, unknown>;
  /** The header (or JSON key) the balance was read from, for messages that name the column. */
  balanceColumn?: string;
}

/** A row left out on purpose (a title above the header, a footer, a total row), said in the summary. */
export interface SkippedRow {
  line: number;
  unit: 'line' | 'row';
  why: string;
}

// Words that open a total row in the exports finance teams send (German, English, French, Italian,
// Dutch, Spanish, Nordic): "Summe", "Total EUR", "Gesamt:", "Grand total".
const TOTAL_WORDS = /^(summe|gesamtsumme|zwischensumme|gesamt|insgesamt|total|totals|grand total|subtotal|sum|somme|totale|totaal|suma|summa|i alt)\b/iu;

/** The text that marks a row as a total row: its first non-empty cell, when it opens with a total word. */
export function totalRowLabel(cells: readonly unknown[]): string | undefined {
  const first = cells.find((c) => !(typeof c === 'string' && c.trim() === '') && c !== null && c !== undefined);
  return typeof first === 'string' && TOTAL_WORDS.test(first.trim()) ? first.trim() : undefined;
}

/**
 * Takes the footer off rows as they stream past, holding back only what might be footer: the
 * last `skipFooter` rows (`--skip-footer N`), and total rows ("Summe", "Total") until a data row
 * follows them. At the end what is held is recorded as skipped. A total word in the middle of the
 * data is not a footer: it is released, to be refused as the bad row it is.
 */
export class FooterFilter {
  readonly #held: TableRow[] = [];
  #totals: TableRow[] = [];

  constructor(
    private readonly skipFooter: number,
    private readonly unit: 'line' | 'row',
    private readonly skipped: SkippedRow[],
    private readonly recogniseTotals = true,
  ) {}

  /** Feeds the next row; returns the rows now known not to be footer, in order. */
  push(row: TableRow): TableRow[] {
    this.#held.push(row);
    if (this.#held.length <= this.skipFooter) return [];
    const next = this.#held.shift()!;
    if (this.recogniseTotals && totalRowLabel(next.cells) !== undefined) {
      this.#totals.push(next);
      return [];
    }
    const released = [...this.#totals, next];
    this.#totals = [];
    return released;
  }

  /** The input ended: what is held is footer. */
  end(): void {
    for (const row of this.#totals) this.skipped.push({ line: row.line, unit: this.unit, why: `a total row (${JSON.stringify(totalRowLabel(row.cells))})` });
    for (const row of this.#held) this.skipped.push({ line: row.line, unit: this.unit, why: 'footer (--skip-footer)' });
    this.#totals = [];
    this.#held.length = 0;
  }
}

/**
 * Turns a table's records (header first) into rows of named fields, one record at a time: the
 * header is resolved against the column map, each data row checked for its width, and the footer
 * taken off. Problems are said with the file name and the line (or spreadsheet row).
 */
export class TableShaper {
  #fields: Array<string | undefined> | undefined;
  #balanceColumn: string | undefined;
  #headerRefused = false;
  /** A refused header, said once the next few rows show whether a later one is the header (a title row above it). */
  #refusal: { text: string; looked: number } | undefined;
  readonly #footer: FooterFilter;

  constructor(
    private readonly name: string,
    private readonly unit: 'line' | 'row',
    private readonly map: ColumnMap | undefined,
    skipFooter: number,
    skipped: SkippedRow[],
    private readonly problem: (text: string) => void,
    private readonly fieldSet: FieldSet = BALANCE_FIELD_SET,
  ) {
    this.#footer = new FooterFilter(skipFooter, unit, skipped);
  }

  /** Whether a header was read (a file with none holds no rows). */
  get sawHeader(): boolean {
    return this.#fields !== undefined || this.#headerRefused;
  }

  /** Feeds the next record; returns the data rows it releases. */
  push(line: number, cells: unknown[]): RawRow[] {
    if (this.#headerRefused) {
      this.#lookForHeader(line, cells);
      return [];
    }
    if (this.#fields === undefined) {
      const header = cells.map(headerText);
      const columns = resolveColumns(header, this.map, this.fieldSet);
      if ('problem' in columns) {
        this.#refusal = { text: `${this.name} ${this.unit} ${line}: ${columns.problem}`, looked: 0 };
        this.#headerRefused = true;
        return [];
      }
      this.#fields = columns.fields;
      const at = columns.fields.indexOf(this.fieldSet.amount);
      this.#balanceColumn = at < 0 ? undefined : header[at]?.trim();
      return [];
    }
    return this.#footer.push({ line, cells }).flatMap((row) => this.#shape(row));
  }

  end(): void {
    this.#sayRefusal('');
    this.#footer.end();
  }

  // A title row above the header is the commonest cause: the row that reads as the header says how many to skip.
  #lookForHeader(line: number, cells: unknown[]): void {
    if (this.#refusal === undefined) return;
    this.#refusal.looked++;
    // The separator was guessed from the title row: a header of one cell is tried with the others too.
    const readings = [cells.map(headerText), ...(cells.length === 1 ? [';', '\t', ','].map((d) => headerText(cells[0]).split(d)) : [])];
    if (readings.some((header) => !('problem' in resolveColumns(header, this.map)))) {
      this.#sayRefusal(`; ${this.unit} ${line} reads as the header: pass --skip-rows ${line - 1} to skip the ${line - 1 === 1 ? 'line' : 'lines'} above it`);
    } else if (this.#refusal.looked >= 5) this.#sayRefusal('');
  }

  #sayRefusal(hint: string): void {
    if (this.#refusal === undefined) return;
    this.problem(`${this.#refusal.text}${hint}`);
    this.#refusal = undefined;
  }

  #shape({ line, cells }: TableRow): RawRow[] {
    const fieldsOf = this.#fields!;
    if (cells.length !== fieldsOf.length) {
      this.problem(`${this.name} ${this.unit} ${line}: has ${cells.length} field${cells.length === 1 ? '' : 's'}, the header has ${fieldsOf.length}`);
      return [];
    }
    const fields: Record<string, unknown> = {};
    fieldsOf.forEach((field, i) => {
      if (field === undefined) return;
      const cell = cells[i];
      // Every text field but the balance is read without surrounding spaces; a balance with them is refused.
      fields[field] = typeof cell === 'string' && field !== this.fieldSet.amount ? cell.trim() : cell;
    });
    return [{ line, unit: this.unit, fields, balanceColumn: this.#balanceColumn }];
  }
}

/** A header cell as text: a spreadsheet may hold a number or a date where a title was meant. */
function headerText(cell: unknown): string {
  if (typeof cell === 'string') return cell;
  if (typeof cell === 'object' && cell !== null) {
    if ('iso' in cell && typeof cell.iso === 'string') return cell.iso;
    if ('value' in cell && typeof cell.value === 'string') return cell.value;
  }
  return String(cell);
}
