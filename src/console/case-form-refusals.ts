import { noteRequiredFor, type ManualCaseAction } from '../cases/case-actions.js';

// What each action's note is for, worded for the case page: the CLI's own refusal names --note,
// which no one sees in a browser.
const NOTE_PURPOSE: Readonly<Record<ManualCaseAction, string>> = {
  ack: 'to acknowledge this case: say what is being done about it',
  assign: 'to assign this case',
  note: 'to add a note: write its text',
  resolve: 'to resolve this case: say how it was fixed (the booking)',
  accept: 'to accept this difference: say why it is accepted',
  reopen: 'to reopen this case: say why it is reopened',
};

/**
 * The refusal of a case form sent with a required field empty (a browser that skipped the form's
 * own validation), in the page's words; undefined when nothing required is missing.
 */
export function missingFieldRefusal(action: ManualCaseAction, fields: { note?: string; to?: string }): string | undefined {
  if (noteRequiredFor(action) && fields.note === undefined) return `A note is required ${NOTE_PURPOSE[action]}. Nothing was changed.`;
  if (action === 'assign' && fields.to === undefined) return 'Choose the person to assign this case to in "To". Nothing was changed.';
  return undefined;
}
