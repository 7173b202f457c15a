import type { ViewDefinition } from './view-definition.js';

const mentionPatterns = new Map<string, RegExp>();

/** Whether `query` names `name` as a whole identifier (not as part of a longer one). */
function mentions(query: string, name: string): boolean {
  // One pattern per name, made once: every command's schema check orders the views.
  let pattern = mentionPatterns.get(name);
  if (pattern === undefined) mentionPatterns.set(name, (pattern = new RegExp(`(^|[^a-z0-9_$])${name}([^a-z0-9_$]|$)`, 'i')));
  return pattern.test(query);
}

/**
 * The views of `views` that `view` reads: those whose name its query mentions. A mention that is
 * not a read (a column of that name) only costs an extra re-creation, never a missed one.
 */
export function viewDependencies(view: ViewDefinition, views: readonly ViewDefinition[]): string[] {
  return views.filter((other) => other.name !== view.name && mentions(view.query, other.name)).map((other) => other.name);
}

/**
 * `views`, each after every view it reads, otherwise in the given order. Throws on two views that
 * read each other, which PostgreSQL could not create either.
 */
export function inDependencyOrder(views: readonly ViewDefinition[]): ViewDefinition[] {
  const ordered: ViewDefinition[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const byName = new Map(views.map((view) => [view.name, view]));
  const place = (view: ViewDefinition): void => {
    if (placed.has(view.name)) return;
    if (visiting.has(view.name)) throw new Error(`The views ${[...visiting].join(', ')} read each other in a circle: no order can create them.`);
    visiting.add(view.name);
    for (const dependency of viewDependencies(view, views)) place(byName.get(dependency)!);
    visiting.delete(view.name);
    placed.add(view.name);
    ordered.push(view);
  };
  for (const view of views) place(view);
  return ordered;
}
