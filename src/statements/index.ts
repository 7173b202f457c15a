// The bank statements' public entry: readers (detected by content), proofs and sample files.
export { readStatementFile, readStatementText } from './read-statement-file.js';
export { closingBooked, openingBooked, type ParsedStatement, type StatementBalance, type StatementEntry, type StatementFormat } from './statement.js';
export { describeMissing, proveStatement, provableOf, type PreviousStatement, type ProvableStatement, type StatementProof, type ProofVerdict, type SequenceRules } from './statement-proof.js';
export { StatementFileError } from './statement-file-error.js';
export { writeCamt053, writeMt940, type SampleDay, type SampleStatements } from './sample-statements.js';
export { writeBai2 } from './bai2-writer.js';
export { statementFingerprint } from './statement-fingerprint.js';
export { importStatementFiles, type StatementImportOptions, type StatementImportResult, type StatementOutcome } from './statement-import.js';
export { listStatementListings, type StatementListing } from './statement-list.js';
export { bankAccountOf } from './bank-account-match.js';
