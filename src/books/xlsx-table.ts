import { LosslessNumber } from '../lossless-json.js';
import type { TableRow } from './table.js';

/** A spreadsheet cell formatted as a date: already a calendar day, whatever `--date-format` says. */
export class CellDate {
  constructor(readonly iso: string) {}
}

/**
 * Streams the first worksheet of an .xlsx file row by row (exceljs's streaming reader), header
 * first: its first non-empty row after `skipRows` is the header. Cells keep their kind: text stays
 * text, a number becomes its exact decimal text (a LosslessNumber, never used as a float), a date
 * cell a CellDate. Memory is a row and the shared strings, not the sheet.
 */
export async function* streamXlsxRecords(filePath: string, name: string, problem: (text: string) => void, skipRows = 0): AsyncGenerator<TableRow> {
  // Loaded only for spreadsheets: the library is large and most imports are CSV.
  const { default: ExcelJS } = await import('exceljs');
  let width: number | undefined;
  let sawSheet = false;
  let yielded = false;
  // exceljs's streaming reader can meet a worksheet before the workbook part it reads beside it
  // has been parsed (seen now and then on Node 24: "Cannot read properties of undefined (reading
  // 'sheets')"), a race inside the library, not a fault of the file. Before any row was handed
  // over, the file is read again from its start; a file that fails each time is refused.
  for (let attempt = 1; ; attempt++) {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(filePath, { sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', worksheets: 'emit', entries: 'ignore' });
    try {
      for await (const sheet of reader) {
        sawSheet = true;
        for await (const row of sheet) {
          // Rows above the header a title or a date stamp fills (--skip-rows) are not read.
          if (row.number <= skipRows) continue;
          const cells: unknown[] = [];
          for (let column = 1; column <= row.cellCount; column++) cells.push(cellValue(row.getCell(column).value));
          // Trailing empty cells (a column formatted but left blank) are not fields.
          while (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
          if (cells.length === 0) continue;
          width ??= cells.length;
          yielded = true;
          // A row shorter than the header has blank cells at its end.
          yield { line: row.number, cells: cells.length < width ? [...cells, ...Array<string>(width - cells.length).fill('')] : cells };
        }
        // The first worksheet only.
        break;
      }
      break;
    } catch (error) {
      if (!yielded && error instanceof TypeError && attempt < 3) {
        sawSheet = false;
        continue;
      }
      problem(`${name}: not a readable .xlsx workbook: ${(error as Error).message}`);
      return;
    }
  }
  if (!sawSheet) problem(`${name}: the workbook has no worksheet`);
}

function cellValue(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return numberCell(value);
  if (value instanceof Date) return new CellDate(value.toISOString().slice(0, 10));
  if (typeof value === 'object') {
    const v = value as { richText?: Array<{ text: string }>; text?: unknown; result?: unknown; error?: string; formula?: string };
    if (v.richText !== undefined) return v.richText.map((r) => r.text).join('');
    if (v.error !== undefined) return v.error;
    if ('formula' in v || 'sharedFormula' in v) return cellValue(v.result);
    if (typeof v.text === 'string') return v.text;
  }
  return value;
}

/**
 * A spreadsheet number as the decimal text Excel shows at full precision: Excel keeps 15
 * significant digits, so a sum stored as 1234.5600000000002 is the 1234.56 the accountant sees,
 * while a real third decimal (1234.565) survives and is refused later like any other.
 */
function numberCell(value: number): unknown {
  if (!Number.isFinite(value)) return String(value);
  const [mantissa = '0', exponentText = '0'] = value.toPrecision(15).split('e');
  const negative = mantissa.startsWith('-');
  const [whole = '0', fraction = ''] = mantissa.replace('-', '').split('.');
  const exponent = Number(exponentText);
  let digits = whole + fraction;
  let point = whole.length + exponent;
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  } else if (point > digits.length) digits = digits.padEnd(point, '0');
  const wholePart = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const fractionPart = digits.slice(point).replace(/0+$/, '');
  const text = `${negative ? '-' : ''}${wholePart}${fractionPart === '' ? '' : `.${fractionPart}`}`;
  return new LosslessNumber(text === '-0' ? '0' : text);
}
