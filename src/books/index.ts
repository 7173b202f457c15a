/**
 * Where the merchant's books come from: files as they are exported (CSV, .xlsx, JSON lines;
 * major or minor units; column maps, date formats, a decimal comma) and a query against the
 * merchant's own ledger database. Everything outside this folder goes through these exports.
 */
export { duplicateProblem, noRows, openBalanceFile, readBalanceFile, type BalanceFileRow, type BalanceFileOptions, type BooksFormat } from './books-file.js';
export { importBooksFile, type BooksImportOptions, type BooksImportResult } from './books-import.js';
export { describeProfile, loadImportProfile, loadImportProfiles, loadNamedProfile, loadNamedProfiles, PROFILE_NAME, resolveBooksFormat, type ImportProfile, type SavedImportProfile, type SavedNamedProfile } from './import-profile.js';
export type { SkippedRow } from './table.js';
export { ENTRY_FIELD_SET, parseColumnMap, type ColumnMap } from './column-map.js';
export { booksRollForward, importEntriesFile, type BooksRollForward, type EntriesImportOptions, type EntriesImportResult } from './entries-import.js';
export { DATE_FORMATS, parseDateFormat, type DateFormat } from './date-text.js';
export { booksSqlSourceOf, entriesSqlSourceOf, pullBooks, pullBooksIfDue, pullEntries, type BooksPullOutcome } from './sql-source.js';
