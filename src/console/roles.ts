import type { ConsoleRole } from '../db/database.types.js';

export type { ConsoleRole };
export const CONSOLE_ROLES: readonly ConsoleRole[] = ['viewer', 'preparer', 'approver', 'admin', 'auditor'];

/** Who may act on cases: everyone but a viewer and an auditor. */
export const mayActOnCases = (role: ConsoleRole) => role !== 'viewer' && role !== 'auditor';
/** An auditor sees everything and may act on nothing (console and CLI). */
export const isReadOnly = (role: ConsoleRole) => role === 'viewer' || role === 'auditor';
/** Who may download a date's or a month's evidence pack. */
export const mayExportEvidence = (role: ConsoleRole) => role === 'approver' || role === 'admin' || role === 'auditor';
/** Who may prepare a sign-off (the maker). */
export const mayPrepare = (role: ConsoleRole) => role === 'preparer' || role === 'admin';
/** Who may approve a sign-off (the checker; never the sign-off's own preparer). */
export const mayApprove = (role: ConsoleRole) => role === 'approver' || role === 'admin';

/** The user-name rule of console_users.name, said once for messages. */
export const USER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const USER_NAME_RULE = 'letters, digits, ".", "_", "@" or "-", starting with a letter or digit, at most 64 characters';
