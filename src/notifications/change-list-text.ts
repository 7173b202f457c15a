import type { ChangeEntry, ChangeGroup, ChangeList } from './change-list.js';

const GROUP_WORDS: Readonly<Record<ChangeGroup, string>> = { new: 'new', changed: 'changed', stillOpen: 'still open', snoozed: 'snoozed', cleared: 'cleared' };

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "EUR -100.00": an entry's amount in major units with its currency. */
function money(currency: string, amount: string | null): string {
  return amount === null ? '' : `${currency} ${amount}`.trim();
}

function entryText(group: ChangeGroup, e: ChangeEntry): string {
  const what = `${e.kind.replaceAll('_', ' ')}${e.amount === null || group === 'cleared' ? '' : ` ${money(e.currency, e.amount)}`}`;
  const days = plural(e.ageDays, 'day', 'days');
  const onCase = e.caseId === null ? '' : `, case #${e.caseId}`;
  switch (group) {
    case 'new':
      return `${what}${onCase}`;
    case 'changed':
      return `${what}${e.previousAmount === null ? '' : `, was ${money(e.currency, e.previousAmount)}`}, open ${days}${onCase}`;
    case 'stillOpen':
      return `${what}, open ${days}${onCase}`;
    case 'snoozed':
      return `${what}, open ${days}, snoozed until ${e.snoozedUntil ?? '?'}${e.snoozeNote === undefined ? '' : ` (${e.snoozeNote})`}${onCase}`;
    case 'cleared':
      return `${what}${e.amount === null ? '' : ` (last ${money(e.currency, e.amount)})`} after ${days}`;
  }
}

/** "1 new, 1 changed, 2 still open, …; 2 immaterial (counted, no case), 1 explained by reconciling items." */
export function changeCountsText(c: ChangeList): string {
  const n = c.counts;
  return `${n.new} new, ${n.changed} changed, ${n.stillOpen} still open, ${n.snoozed} snoozed, ${n.cleared} cleared; ${n.immaterial} immaterial (counted, no case), ${n.explained} explained by reconciling items.`;
}

/**
 * The change list as lines people read: per account (most material first) a heading naming
 * where its balance comes from, then one line per problem under its group.
 */
export function changeListLines(c: ChangeList): Array<{ account: string; lines: string[] }> {
  return c.accounts.map((a) => ({
    account: `${a.account} (${a.source === 'bank' ? 'bank statement' : 'gateway'})`,
    lines: (Object.keys(GROUP_WORDS) as ChangeGroup[]).flatMap((group) => a[group].map((e) => `${GROUP_WORDS[group]}: ${entryText(group, e)}`)),
  }));
}
