import { currencyDecimals, toMajorUnits } from '../money/format-amount.js';

/** One day of a sample statement: its sequence number, closing date and booked entries (minor units, signed). */
export interface SampleDay {
  sequence: number;
  date: string;
  entries: readonly bigint[];
  /** A closing balance other than the true one (opening + entries): a statement that fails its proof. */
  closingOverride?: bigint;
}

/** What a sample file holds: one account, its opening balance before the first day, and the days. */
export interface SampleStatements {
  iban: string;
  currency: string;
  opening: bigint;
  days: readonly SampleDay[];
  /** camt.053 version, 2 to 13 (default 2). */
  camtVersion?: number;
}

function major(amount: bigint, currency: string): string {
  return toMajorUnits(amount < 0n ? -amount : amount, currencyDecimals(currency) ?? 0);
}

function rolled(sample: SampleStatements): Array<SampleDay & { opening: bigint; closing: bigint }> {
  let balance = sample.opening;
  return sample.days.map((day) => {
    const opening = balance;
    const closing = day.closingOverride ?? opening + day.entries.reduce((a, b) => a + b, 0n);
    balance = closing;
    return { ...day, opening, closing };
  });
}

function previousDay(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/**
 * A camt.053 file with one `Stmt` per day, in the layout banks send: `Id`, `ElctrncSeqNb`,
 * `FrToDt`, `Acct`, balances OPBD/CLBD/CLAV, booked entries with booking and value dates.
 */
export function writeCamt053(sample: SampleStatements): string {
  const version = String(sample.camtVersion ?? 2).padStart(2, '0');
  const c = sample.currency;
  const bal = (code: string, amount: bigint, date: string) =>
    `      <Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="${c}">${major(amount, c)}</Amt><CdtDbtInd>${amount < 0n ? 'DBIT' : 'CRDT'}</CdtDbtInd><Dt><Dt>${date}</Dt></Dt></Bal>`;
  // Sts became a choice (Sts/Cd) in version 08: the schema of camt.053.001.08 refuses a bare <Sts>BOOK</Sts>.
  const status = Number(version) >= 8 ? '<Sts><Cd>BOOK</Cd></Sts>' : '<Sts>BOOK</Sts>';
  const statements = rolled(sample).map((day) => {
    const entries = day.entries.map(
      (amount, i) =>
        `      <Ntry><NtryRef>${day.sequence}-${i + 1}</NtryRef><Amt Ccy="${c}">${major(amount, c)}</Amt><CdtDbtInd>${amount < 0n ? 'DBIT' : 'CRDT'}</CdtDbtInd>${status}<BookgDt><Dt>${day.date}</Dt></BookgDt><ValDt><Dt>${day.date}</Dt></ValDt><AcctSvcrRef>B${day.sequence}-${i + 1}</AcctSvcrRef><BkTxCd><Prtry><Cd>${amount < 0n ? 'NMSC' : 'NTRF'}</Cd></Prtry></BkTxCd></Ntry>`,
    );
    return [
      '    <Stmt>',
      `      <Id>STMT-${day.date}-${day.sequence}</Id>`,
      `      <ElctrncSeqNb>${day.sequence}</ElctrncSeqNb>`,
      `      <CreDtTm>${day.date}T23:00:00Z</CreDtTm>`,
      `      <FrToDt><FrDtTm>${day.date}T00:00:00Z</FrDtTm><ToDtTm>${day.date}T23:59:59Z</ToDtTm></FrToDt>`,
      `      <Acct><Id><IBAN>${sample.iban}</IBAN></Id><Ccy>${c}</Ccy></Acct>`,
      bal('OPBD', day.opening, previousDay(day.date)),
      bal('CLBD', day.closing, day.date),
      bal('CLAV', day.closing, day.date),
      ...entries,
      '    </Stmt>',
    ].join('\n');
  });
  const first = sample.days[0]?.date ?? '2026-01-01';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.${version}">`,
    '  <BkToCstmrStmt>',
    `    <GrpHdr><MsgId>MSG-${first}</MsgId><CreDtTm>${first}T23:00:00Z</CreDtTm></GrpHdr>`,
    ...statements,
    '  </BkToCstmrStmt>',
    '</Document>',
    '',
  ].join('\n');
}

/**
 * An MT940 file with one statement per day in `{1:}{2:}{4:` blocks, as banks send them:
 * `:20:STARTUMS` every day, `:28C:` the statement number, `:60F:`, `:61:`/`:86:`, `:62F:`, `:64:`.
 */
export function writeMt940(sample: SampleStatements): string {
  const c = sample.currency;
  const yymmdd = (date: string) => date.slice(2).replaceAll('-', '');
  // An MT940 amount always has its decimal comma, even without decimals (JPY 1500 is `1500,`).
  const amount = (value: bigint) => {
    const text = major(value, c);
    return text.includes('.') ? text.replace('.', ',') : `${text},`;
  };
  const mark = (value: bigint) => (value < 0n ? 'D' : 'C');
  return rolled(sample)
    .map((day) =>
      [
        `{1:F01BANKDEFFAXXX0000000000}{2:O940${yymmdd(day.date)}2300BANKDEFFAXXX00000000002611272300N}{4:`,
        ':20:STARTUMS',
        `:25:${sample.iban}`,
        `:28C:${day.sequence}/1`,
        `:60F:${mark(day.opening)}${yymmdd(previousDay(day.date))}${c}${amount(day.opening)}`,
        ...day.entries.flatMap((value, i) => [
          `:61:${yymmdd(day.date)}${day.date.slice(5).replace('-', '')}${mark(value)}${amount(value)}${value < 0n ? 'NMSC' : 'NTRF'}${day.sequence}-${i + 1}//B${day.sequence}-${i + 1}`,
          `:86:entry ${i + 1} of statement ${day.sequence}`,
        ]),
        `:62F:${mark(day.closing)}${yymmdd(day.date)}${c}${amount(day.closing)}`,
        `:64:${mark(day.closing)}${yymmdd(day.date)}${c}${amount(day.closing)}`,
        '-}',
      ].join('\r\n'),
    )
    .join('\r\n')
    .concat('\r\n');
}
