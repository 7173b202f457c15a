import { describe, expect, it } from 'vitest';
import { readStatementText } from '../../src/statements/read-statement-file.js';
import { writeCamt053, type SampleStatements } from '../../src/statements/sample-statements.js';
import { StatementFileError } from '../../src/statements/statement-file-error.js';
import { shownFileName } from '../../src/statements/statement-file-error.js';

const oneDay: SampleStatements = { iban: 'DE89370400440532013000', currency: 'EUR', opening: 1_000_000n, days: [{ sequence: 7, date: '2026-11-02', entries: [250_000n, -2_550n] }] };
const good = writeCamt053(oneDay);

function refusal(text: string, name = 'x.xml'): string {
  try {
    readStatementText(text, name);
  } catch (error) {
    expect(error).toBeInstanceOf(StatementFileError);
    expect((error as StatementFileError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('hostile and broken camt files are refused naming the file, the line and the XML path', () => {
  it('refuses an external entity and any DTD entity, never expanding one', () => {
    const external = good.replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>').replace('>2500.00<', '>&x;<');
    expect(refusal(external, 'ext.xml')).toMatch(/^ext\.xml: a document type declaration \(<!DOCTYPE\) at line 2, column \d+: refused/);
    const internal = good.replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY one "1">]>').replace('>2500.00<', '>&one;2500.00<');
    expect(refusal(internal, 'int.xml')).toMatch(/^int\.xml: a document type declaration/);
    expect(refusal(good.replace('>2500.00<', '>&one;500.00<'), 'undef.xml')).toMatch(/^undef\.xml: not well-formed XML at line \d+, column \d+ \(Document\/BkToCstmrStmt\/Stmt\/Ntry\/Amt\): undefined entity/);
  });

  it('decodes numeric character references as XML requires', () => {
    const [statement] = readStatementText(good.replace('>2500.00<', '>&#50;5&#x30;0.00<'), 'ref.xml');
    expect(statement!.entries[0]!.amount).toBe(250_000n);
  });

  it('refuses NUL and other control characters, deep nesting and broken tags', () => {
    expect(refusal(good.replace('STMT', 'ST\u0000MT'), 'nul.xml')).toMatch(/^nul\.xml: not well-formed XML at line 6, column \d+ \(Document\/BkToCstmrStmt\/Stmt\/Id\): disallowed character/);
    expect(refusal(good.replace('STMT', 'ST\u0007MT'), 'bel.xml')).toMatch(/^bel\.xml: not well-formed XML at line 6/);
    const deep = good.replace('<BkToCstmrStmt>', `<BkToCstmrStmt>${'<X>'.repeat(200)}${'</X>'.repeat(200)}`);
    expect(refusal(deep, 'deep.xml')).toMatch(/^deep\.xml: elements nested deeper than 64 levels at line 3, column \d+ \(Document\/BkToCstmrStmt\/X\/… \d+ more …\/X\/X\): refused/);
    expect(refusal(good.replace('</Amt>', '</Am>'), 'cut.xml')).toMatch(/^cut\.xml: not well-formed XML at line \d+, column \d+ \(Document\/BkToCstmrStmt\/Stmt\/Bal\): unexpected close tag/);
  });

  it('shows a file name with control characters escaped', () => {
    expect(shownFileName('evil\u001b[31m.xml')).toBe('evil\\x1b[31m.xml');
    expect(refusal('<x/>', shownFileName('a\u0007.xml'))).toMatch(/^a\\x07\.xml: /);
  });
});
