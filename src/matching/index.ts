/**
 * Matching books entries with bank statement entries: the rules as pure functions
 * (match-rules.ts), run over the database by matching-service.ts, and the people's own
 * matches and undos (manual-match.ts). Everything outside this folder goes through these exports.
 */
export { DEFAULT_MATCHING_RULES, findSubset, isBankCharge, matchEntries, normalizeReference, REFERENCE_KINDS, type BooksLine, type MatchingRules, type ProposedMatch, type ReferenceKind, type RuleName, type StatementLine } from './match-rules.js';
export { MATCHED_BY_RULES, matchingRulesFor, runMatching, undoMatchesOfStatement, type RuleMatch } from './matching-service.js';
export { addManualMatch, undoMatch, type ManualMatchRequest } from './manual-match.js';
export { listMatches, type MatchListing } from '../db/entry-match.repository.js';
