/**
 * A view the accountants query, defined once: `migrate` creates it as `create view <name> as
 * <query>` and makes it again whenever `query` changes (see src/db/migrate-views.ts).
 */
export interface ViewDefinition {
  /** Its name in the database. */
  readonly name: string;
  /** The query that follows `create view <name> as`: every character of it counts as a change. */
  readonly query: string;
}
