import { describe, expect, it } from 'vitest';
import { CamtStream, readCamt } from '../../src/statements/camt-reader.js';
import { refusal } from '../helpers/statement-refusal.js';

// Where a camt element counts: only at its place in the document, only its first occurrence,
// only with text in it. Each test writes its own small document.
const NS = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';
const bal = (code: string, date = '2026-11-30') => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${date}</Dt></Dt></Bal>`;
const stmt = (...more: string[]) => `<Stmt><Id>S-1</Id><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>${bal('OPBD')}${bal('CLBD')}${more.join('')}</Stmt>`;
const ntry = (inner: string) => `<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>${inner}</Ntry>`;
const doc = (inside: string, after = '') => `<Document xmlns="${NS}"><BkToCstmrStmt>${inside}</BkToCstmrStmt>${after}</Document>`;

describe('camt elements counted at their place only', () => {
  it('reads an element holding only blanks as absent', () => {
    const [entry] = readCamt(doc(stmt(ntry('<NtryRef>   </NtryRef><AcctSvcrRef>\n\t</AcctSvcrRef>'))), 'w.xml')[0]!.entries;
    expect([entry!.reference, entry!.bankReference]).toEqual([null, null]);
    expect(refusal(() => readCamt(doc(stmt('<Ntry><Amt Ccy="EUR">1</Amt><CdtDbtInd>  </CdtDbtInd><Sts>BOOK</Sts></Ntry>')), 'w.xml'))).toBe('w.xml: Stmt[1]/Ntry[1]/CdtDbtInd is missing: CRDT or DBIT.');
  });

  it('reads the first of an element given twice where the standard has it once', () => {
    const [entry] = readCamt(doc(stmt(ntry('<NtryRef>FIRST</NtryRef><NtryRef>SECOND</NtryRef>'))), 't.xml')[0]!.entries;
    expect(entry!.reference).toBe('FIRST');
  });

  it('takes no Ntry outside a statement for an entry, nor a Stmt outside the message for a statement', () => {
    const seen: string[] = [];
    const stream = new CamtStream('o.xml', {
      entry: (entry, index) => seen.push(`entry ${index} ${entry.amount}`),
      statement: (head, index, entries) => seen.push(`statement ${index} ${head.statementId} ${entries}`),
    });
    stream.write(doc(`<GrpHdr><Ntry><Amt Ccy="EUR">9</Amt></Ntry></GrpHdr>${stmt(ntry(''))}`, `<Other><Stmt><Ntry><Amt Ccy="EUR">7</Amt></Ntry></Stmt></Other>`));
    stream.close();
    expect(seen).toEqual(['entry 0 100', 'statement 0 S-1 1']);
  });

  it('refuses a date or creation time that does not start with YYYY-MM-DD', () => {
    expect(refusal(() => readCamt(doc(stmt(ntry('<BookgDt><Dt>x2026-11-30</Dt></BookgDt>'))), 'd.xml'))).toBe('d.xml: Stmt[1]/Ntry[1]/BookgDt has no Dt or DtTm.');
    const notification = `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><Ntfctn><Id>N</Id><CreDtTm>x2026-12-01T08:00:00Z</CreDtTm><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>${ntry('')}</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`;
    expect(refusal(() => readCamt(notification, 'n.xml'))).toBe('n.xml: Ntfctn[1]/Ntry/BookgDt is missing on every entry, and the notification has no CreDtTm: its date is unknown.');
  });

  it('refuses a document without a root element as not well-formed', () => {
    expect(refusal(() => readCamt('<?xml version="1.0"?>\n', 'e.xml'))).toMatch(/^e\.xml: not well-formed XML at line \d+, column \d+: document must contain a root element\.$/);
  });
});
