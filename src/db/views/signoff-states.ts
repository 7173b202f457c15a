import type { ViewDefinition } from './view-definition.js';

/**
 * What happened to each sign-off, by its steps? Who approved it and when, when it was
 * invalidated (and why), who reopened it, when and why — read from the append-only step log
 * (signoff_steps), not from the columns of signoffs, so a column nulled past the triggers changes
 * nothing a reader is shown. A sign-off without a step of a kind has nulls there.
 */
export const signoffStates: ViewDefinition = {
  name: 'signoff_states',
  query: `
    select s.id as signoff_id,
      ap.actor as approved_by, ap.at as approved_at,
      inv.at as invalidated_at, inv.detail -> 'changes' as invalidation,
      re.actor as reopened_by, re.at as reopened_at, re.detail ->> 'note' as reopen_note
    from signoffs s
    left join signoff_steps ap on ap.signoff_id = s.id and ap.kind = 'approved'
    left join signoff_steps inv on inv.signoff_id = s.id and inv.kind = 'invalidated'
    left join signoff_steps re on re.signoff_id = s.id and re.kind = 'reopened'`,
};
