/**
 * How a locale writes numbers for people: the grouping and decimal marks (de-DE "." and ",") and
 * the field separator its spreadsheets expect in CSV (";" where the decimal mark is a comma, as
 * German Excel and LibreOffice read it). Taken from the runtime's Intl data once per locale.
 */
export interface NumberStyle {
  readonly locale: string | undefined;
  readonly group: string;
  readonly decimal: string;
  readonly csvDelimiter: ',' | ';';
}

/** Without RECON_LOCALE: 1,234.56 and comma-separated CSV, as before locales existed. */
export const DEFAULT_NUMBER_STYLE: NumberStyle = { locale: undefined, group: ',', decimal: '.', csvDelimiter: ',' };

const styles = new Map<string, NumberStyle>();

/** The number style of a BCP 47 locale (undefined: the default style). */
export function numberStyleOf(locale: string | undefined): NumberStyle {
  if (locale === undefined) return DEFAULT_NUMBER_STYLE;
  let style = styles.get(locale);
  if (style === undefined) {
    // Stryker disable next-line ObjectLiteral: grouping is on by default, and 1234567.5 has enough digits to be grouped in every locale.
    const parts = new Intl.NumberFormat(locale, { useGrouping: true }).formatToParts(1234567.5);
    // Stryker disable next-line OptionalChaining,StringLiteral: every locale writes the .5 of 1234567.5 with a decimal mark, so the fallback is never taken.
    const decimal = parts.find((p) => p.type === 'decimal')?.value ?? '.';
    // Some locales group with a narrow no-break space (fr-FR): kept, people read it as a space.
    // Stryker disable next-line OptionalChaining,StringLiteral: every locale groups the seven digits of 1234567, so the fallback is never taken.
    const group = parts.find((p) => p.type === 'group')?.value ?? '';
    style = { locale, group, decimal, csvDelimiter: decimal === ',' ? ';' : ',' };
    styles.set(locale, style);
  }
  return style;
}
