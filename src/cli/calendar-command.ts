import { InvalidArgumentError, type Command } from 'commander';
import { BusinessCalendar } from '../business-date/business-calendar.js';
import { durationSetting, formatDuration } from '../business-date/duration.js';
import { formatLocalTime } from '../business-date/local-time.js';
import { calendarDifferences, calendarVersions, FROM_THE_START, rulesOfConfig, setCalendarFrom, sinceWhen, type CalendarRules } from '../business-date/stored-calendar.js';
import type { CalendarVersion } from '../config/config-types.js';
import { envSchema } from '../config/env-schema.js';
import { formatTable } from '../text-table.js';
import { summaryOf } from './command-summaries.js';
import type { CliRuntime } from './runtime.js';

/** Parses one option the way its configuration variable is parsed, so both accept and refuse the same values. */
function asVariable<K extends 'RECON_TIMEZONE' | 'RECON_CUTOFF' | 'RECON_CAPTURE_WINDOW' | 'RECON_BOOKS_DEADLINE' | 'RECON_STATEMENT_DEADLINE'>(variable: K) {
  return (value: string) => {
    const parsed = envSchema.shape[variable].safeParse(value);
    if (!parsed.success) throw new InvalidArgumentError(`${parsed.error.issues[0]?.message ?? 'is not valid'} (as ${variable})`);
    return parsed.data as string | number;
  };
}

function parseDate(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)) || new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value) {
    throw new InvalidArgumentError('must be a business date YYYY-MM-DD, such as 2026-12-05');
  }
  return value;
}

function versionJson(v: CalendarVersion) {
  return {
    effective_from: v.effectiveFrom === FROM_THE_START ? null : v.effectiveFrom,
    timezone: v.timezone,
    cutoff: v.cutoff,
    capture_window_seconds: v.captureWindowMs / 1000,
    books_deadline_seconds: v.booksDeadlineMs / 1000,
    statement_deadline_seconds: v.statementDeadlineMs / 1000,
    recorded_at: v.recordedAt.toISOString(),
  };
}

function historyTable(versions: readonly CalendarVersion[], today: string, timezone: string): string {
  const inForce = [...versions].reverse().find((v) => v.effectiveFrom <= today);
  return formatTable(
    ['effective', 'time zone', 'cut-off', 'capture window', 'books deadline', 'statement deadline', 'recorded', ''],
    versions.map((v) => [
      sinceWhen(v.effectiveFrom),
      v.timezone,
      v.cutoff,
      `±${formatDuration(v.captureWindowMs)}`,
      `${formatDuration(v.booksDeadlineMs)} after the cut-off`,
      `${formatDuration(v.statementDeadlineMs)} after the cut-off`,
      formatLocalTime(v.recordedAt, timezone),
      v === inForce ? 'in force' : v.effectiveFrom > today ? 'not yet in force' : '',
    ]),
  );
}

/** `wallet-recon calendar show|set`: the database's business calendar and its history of changes. */
export function registerCalendarCommand(program: Command, runtime: CliRuntime): void {
  const calendar = program
    .command('calendar')
    .description(summaryOf('calendar'))
    .addHelpText(
      'after',
      '\nThe business calendar (time zone, cut-off, capture window, books and statement deadlines) is a setting of the\n' +
        'database: the first worker ("wallet-recon schedule") records its configuration, every command then reads the\n' +
        "database's. A change holds from a business date on; earlier dates keep the rules they were captured under.\n\n" +
        'Examples:\n  wallet-recon calendar show\n  wallet-recon calendar set --cutoff 00:00 --from 2026-12-10',
    );

  calendar
    .command('show')
    .description("the database's business calendar: the rules in force, and each change with the business date it holds from")
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await runtime.withContext('wallet-recon calendar show', { ownCalendarCheck: true }, async (ctx) => {
        const versions = await calendarVersions(ctx.database.db);
        const configured = rulesOfConfig(runtime.config());
        if (versions.length === 0) {
          if (opts.json) {
            runtime.output.out(JSON.stringify({ recorded: false, configured: versionJson({ effectiveFrom: FROM_THE_START, ...configured, recordedAt: ctx.clock.now() }), versions: [] }, null, 2));
            return 0;
          }
          runtime.output.out(
            `No business calendar is recorded in this database yet: the first worker ("wallet-recon schedule") records its configuration, ` +
              `or "wallet-recon calendar set … --from DATE" records this configuration up to DATE and the change from it.\n` +
              `Until then each command reads dates by its own configuration: time zone ${configured.timezone}, cut-off ${configured.cutoff}, ` +
              `capture window ±${formatDuration(configured.captureWindowMs)}, books ${formatDuration(configured.booksDeadlineMs)} and statements ${formatDuration(configured.statementDeadlineMs)} after the cut-off.`,
          );
          return 0;
        }
        const businessCalendar = new BusinessCalendar(versions[0]!, versions.slice(1));
        const today = businessCalendar.businessDateOf(ctx.clock.now());
        const inForce = [...versions].reverse().find((v) => v.effectiveFrom <= today)!;
        const differences = calendarDifferences(versions.at(-1)!, configured);
        if (opts.json) {
          runtime.output.out(
            JSON.stringify({ recorded: true, current_business_date: today, in_force: versionJson(inForce), versions: versions.map(versionJson), configuration_differs: differences }, null, 2),
          );
          return 0;
        }
        const lines = [
          `Business calendar of this database (current business date ${today}): time zone ${inForce.timezone}, cut-off ${inForce.cutoff} ` +
            `(today's ends ${formatLocalTime(businessCalendar.cutoffOf(today), inForce.timezone)}), capture window ±${formatDuration(inForce.captureWindowMs)}, ` +
            `books due ${formatDuration(inForce.booksDeadlineMs)} and statements ${formatDuration(inForce.statementDeadlineMs)} after the cut-off.`,
          '',
          historyTable(versions, today, inForce.timezone),
        ];
        if (differences.length > 0) lines.push('', `This configuration differs from it: ${differences.join('; ')}. Commands follow the database's calendar; a worker configured so does not start.`);
        runtime.output.out(lines.join('\n'));
        return 0;
      });
    });

  calendar
    .command('set')
    .description('change the business calendar from a business date on (earlier dates keep their rules); unnamed settings stay as they are')
    .requiredOption('--from <date>', 'the first business date the new rules hold for (a date not yet begun)', parseDate)
    .option('--timezone <zone>', 'IANA time zone, as RECON_TIMEZONE', asVariable('RECON_TIMEZONE'))
    .option('--cutoff <HH:MM>', 'local time a business date ends, as RECON_CUTOFF', asVariable('RECON_CUTOFF'))
    .option('--capture-window <duration>', 'either side of the cut-off, as RECON_CAPTURE_WINDOW (such as 3h)', asVariable('RECON_CAPTURE_WINDOW'))
    .option('--books-deadline <duration>', 'after the cut-off, as RECON_BOOKS_DEADLINE (such as 12h)', asVariable('RECON_BOOKS_DEADLINE'))
    .option('--statement-deadline <duration>', 'after the cut-off, as RECON_STATEMENT_DEADLINE (such as 2d)', asVariable('RECON_STATEMENT_DEADLINE'))
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  wallet-recon calendar set --cutoff 00:00 --from 2026-12-10\n\nThen restart every worker configured with the new settings.')
    .action(async (opts: { from: string; timezone?: string; cutoff?: string; captureWindow?: number; booksDeadline?: number; statementDeadline?: number; json?: boolean }) => {
      const change: Partial<CalendarRules> = {
        timezone: opts.timezone,
        cutoff: opts.cutoff,
        captureWindowMs: opts.captureWindow,
        booksDeadlineMs: opts.booksDeadline,
        statementDeadlineMs: opts.statementDeadline,
      };
      if (Object.values(change).every((v) => v === undefined)) {
        const { UsageError } = await import('../errors.js');
        throw new UsageError('calendar set changes nothing without one of --timezone, --cutoff, --capture-window, --books-deadline, --statement-deadline.');
      }
      await runtime.withContext('wallet-recon calendar set', { ownCalendarCheck: true }, async (ctx) => {
        const versions = await setCalendarFrom(ctx.database.db, runtime.config(), change, opts.from, ctx.clock.now());
        const added = versions.find((v) => v.effectiveFrom === opts.from)!;
        if (opts.json) {
          runtime.output.out(JSON.stringify({ changed_from: opts.from, versions: versions.map(versionJson) }, null, 2));
          return 0;
        }
        const businessCalendar = new BusinessCalendar(versions[0]!, versions.slice(1));
        const today = businessCalendar.businessDateOf(ctx.clock.now());
        runtime.output.out(
          [
            `From ${opts.from} on, business dates end at ${added.cutoff} ${added.timezone} (${opts.from} ends ${formatLocalTime(businessCalendar.cutoffOf(opts.from), added.timezone)}); dates before it keep the rules they were captured under.`,
            '',
            historyTable(versions, today, added.timezone),
            '',
            `Restart every worker ("wallet-recon schedule") with RECON_TIMEZONE=${added.timezone} RECON_CUTOFF=${added.cutoff} RECON_CAPTURE_WINDOW=${durationSetting(added.captureWindowMs)} ` +
              `RECON_BOOKS_DEADLINE=${durationSetting(added.booksDeadlineMs)} RECON_STATEMENT_DEADLINE=${durationSetting(added.statementDeadlineMs)}: a worker configured otherwise does not start.`,
          ].join('\n'),
        );
        return 0;
      });
    });
}
