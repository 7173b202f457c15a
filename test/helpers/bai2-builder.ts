/**
 * Writes BAI2 files for tests from a model of their groups and accounts, with every control total
 * and record count computed as the BAI2 specification defines them — independently of the reader:
 * - account trailer (49): the sum of every amount of the account's 03 record (status amounts with
 *   their sign, summary amounts) and of its 16 records; its records: 03 to 49, 88s included;
 * - group trailer (98): the sum of its accounts' control totals, its accounts, its records (02 to 98);
 * - file trailer (99): the sum of its groups' control totals, its groups, its records (01 to 99).
 * Availability amounts of funds types (S, D) move no money and count in no total.
 */

/** One type code group of an 03 record: type code, amount (empty: none), item count, funds type and its fields. */
export interface Bai2Summary {
  type: string;
  /** Written as given: `+150000`, `-5`, `25000` or `''`. */
  amount: string;
  count?: string;
  funds?: string[];
}

export interface Bai2Detail {
  type: string;
  amount: string;
  funds?: string[];
  bankReference?: string;
  reference?: string;
  /** The text field, then the text of each 88 continuing it. */
  text?: string[];
}

export interface Bai2Account {
  number: string;
  currency?: string;
  summaries: Bai2Summary[];
  /** How many type code groups go on each physical line (the first on the 03, the rest on 88s); all on the 03 when absent. */
  perLine?: number;
  details: Bai2Detail[];
}

export interface Bai2Group {
  status?: string;
  asOfDate: string;
  asOfTime?: string;
  currency?: string;
  modifier?: string;
  accounts: Bai2Account[];
}

export interface Bai2Model {
  created?: string;
  createdTime?: string;
  fileId?: string;
  groups: Bai2Group[];
}

/** A written file and where its trailers are (1-based lines), with the totals and counts written in them. */
export interface Bai2Written {
  text: string;
  accountTrailers: Array<{ line: number; total: bigint; records: number; account: string; headerLine: number }>;
  groupTrailers: Array<{ line: number; total: bigint; accounts: number; records: number; headerLine: number }>;
  fileTrailer: { line: number; total: bigint; groups: number; records: number };
}

// An amount the reader must refuse counts as nothing: the refusal, not the total, is what is tested.
const amountOf = (text: string): bigint => (/^[+-]?\d+$/.test(text) ? BigInt(text) : 0n);

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out.length === 0 ? [[]] : out;
}

export function writeBai2File(model: Bai2Model): Bai2Written {
  const lines: string[] = [`01,SENDER,RECEIVER,${model.created ?? '261127'},${model.createdTime ?? '0600'},${model.fileId ?? '1'},,,2/`];
  const accountTrailers: Bai2Written['accountTrailers'] = [];
  const groupTrailers: Bai2Written['groupTrailers'] = [];
  let fileTotal = 0n;
  for (const group of model.groups) {
    const groupHeaderLine = lines.length + 1;
    lines.push(`02,RECEIVER,SENDER,${group.status ?? '1'},${group.asOfDate},${group.asOfTime ?? '2400'},${group.currency ?? ''},${group.modifier ?? '2'}/`);
    let groupTotal = 0n;
    for (const account of group.accounts) {
      const headerLine = lines.length + 1;
      const fieldsOf = (s: Bai2Summary) => [s.type, s.amount, s.count ?? '', ...(s.funds ?? [''])];
      const parts = chunks(account.summaries, account.perLine ?? Math.max(1, account.summaries.length));
      parts.forEach((part, i) => {
        const fields = part.flatMap(fieldsOf);
        lines.push(i === 0 ? `03,${[account.number, account.currency ?? '', ...fields].join(',')}/` : `88,${fields.join(',')}/`);
      });
      let total = account.summaries.reduce((sum, s) => sum + amountOf(s.amount), 0n);
      for (const d of account.details) {
        const [first = '', ...more] = d.text ?? [];
        lines.push(`16,${[d.type, d.amount, ...(d.funds ?? ['']), d.bankReference ?? '', d.reference ?? '', first].join(',')}/`, ...more.map((t) => `88,${t}/`));
        total += amountOf(d.amount);
      }
      const records = lines.length - headerLine + 2;
      lines.push(`49,${total},${records}/`);
      accountTrailers.push({ line: lines.length, total, records, account: account.number, headerLine });
      groupTotal += total;
    }
    const records = lines.length - groupHeaderLine + 2;
    lines.push(`98,${groupTotal},${group.accounts.length},${records}/`);
    groupTrailers.push({ line: lines.length, total: groupTotal, accounts: group.accounts.length, records, headerLine: groupHeaderLine });
    fileTotal += groupTotal;
  }
  lines.push(`99,${fileTotal},${model.groups.length},${lines.length + 1}/`);
  return { text: `${lines.join('\n')}\n`, accountTrailers, groupTrailers, fileTrailer: { line: lines.length, total: fileTotal, groups: model.groups.length, records: lines.length } };
}

/** One account with an opening and closing ledger balance (010, 015) and the given 16 records. */
export function ledgerAccount(number: string, opening: bigint, closing: bigint, details: Bai2Detail[] = [], currency = ''): Bai2Account {
  const signed = (v: bigint) => (v < 0n ? `${v}` : `+${v}`);
  return { number, currency, summaries: [{ type: '010', amount: signed(opening) }, { type: '015', amount: signed(closing) }], details };
}

/** A file of one group (as-of 26 November 2026, USD unless the account says) with the given accounts. */
export function oneGroup(accounts: Bai2Account[], group: Partial<Bai2Group> = {}): Bai2Written {
  return writeBai2File({ groups: [{ asOfDate: '261126', currency: 'USD', ...group, accounts }] });
}
