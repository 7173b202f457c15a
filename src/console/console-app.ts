import { randomBytes } from 'node:crypto';
import { findClosingStatement } from '../db/bank-statement.repository.js';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { applyCaseAction, MANUAL_CASE_ACTIONS, type ManualCaseAction } from '../cases/case-actions.js';
import { missingFieldRefusal } from './case-form-refusals.js';
import { snoozeCase } from '../cases/case-snooze.js';
import { listRunningSnoozes } from '../db/problem.repository.js';
import { AGE_BUCKETS, ageBucketOf, caseAgeDays, CASE_KINDS, CASE_STATES } from '../cases/case-model.js';
import { listBooksOfDate, listCapturesOfDate } from '../db/console-views.repository.js';
import { deleteExpiredSessions, deleteSignInAttemptsBefore, insertAudit, listUsers } from '../db/console.repository.js';
import { findCase, listCaseEvidence, listCases, listCasesByIds, listEvents, listOccurrences } from '../db/reconciliation-case.repository.js';
import { findSignoff } from '../db/signoff.repository.js';
import { countResultsOfDate, listResultsOfDate } from '../db/reconciliation-result.repository.js';
import { reopenSignoff } from '../signoff/reopen.js';
import { readSealedReport, SEAL_MISMATCH } from '../signoff/seal.js';
import { DateNotSettledError, ReconError, SealMismatchError, UsageError } from '../errors.js';
import { latestClosedDateOf, todayOf } from '../reconciliation/business-dates.js';
import { addDays } from '../business-date/zoned-time.js';
import { businessCalendarOf } from '../config/index.js';
import { findUnsettledAccounts } from '../signoff/settle-check.js';
import { previousDate } from '../clock.js';
import { numberStyleOf } from '../money/number-style.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { changeOwnPassword, PasswordChangeRefusedError } from './console-users.js';
import { isLoopbackHost } from '../gateway/base-url.js';
import { verifyPassword } from './passwords.js';
import { authenticate, SignInBusyError, SignInGuard, SignInThrottledError, SIGN_IN_WINDOW_MS } from './sign-in.js';
import { casePage, casesPage, changePasswordPage, dayPage, loginPage, messagePage, type CasesFilter, type PageContext } from './pages.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.types.js';
import { countOpenJobsOfDate, hasQueueSchema } from '../db/job-queue.repository.js';
import { mayActOnCases } from './roles.js';
import { endSession, resumeSession, SESSION_IDLE_MS, sessionKeyOf, startSession, tokensEqual, type ConsoleSession } from './sessions.js';
import { approveSignoff, detectSignoffChanges, prepareSignoff, requireDate, signoffStateOf, SignoffRefusedError } from '../signoff/signoff-service.js';
import { problemsToShow } from '../signoff/signoff-integrity.js';
import type { OidcSignIn } from './oidc.js';
import { setFlashNotice, takeFlashNotice } from './flash-notice.js';
import { registerOverviewRoutes, consoleAccounts, recentTrends, defaultDayOf } from './overview-routes.js';
import { registerEvidenceRoutes } from './evidence-routes.js';
import { loadExplain, registerItemsRoutes } from './items-routes.js';
import { loadDifferenceTrail } from '../cases/difference-trail.js';

/** A lone UTF-16 surrogate (either half without its pair) or a NUL: not text PostgreSQL or a hash can take as given. */
// eslint-disable-next-line no-control-regex -- a NUL is exactly what is refused here
const NOT_TEXT = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;

export const SESSION_COOKIE = 'recon_session';
/** The session cookie's name on https: the prefix makes browsers refuse it unless Secure, Path=/ and without Domain. */
export const SECURE_SESSION_COOKIE = '__Host-recon_session';
/** How often the running console removes expired sessions and sign-in attempts past their window. */
const PURGE_EVERY_MS = 5 * 60_000;
/** Accounts per page of the day view. */
export const DAY_PAGE_ACCOUNTS = 25;
const LOGIN_CSRF_COOKIE = 'recon_login_csrf';

// Scripts and styles only from this origin (no inline code), nothing framed, forms only to here.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
// The sealed report is a self-contained file with inline styles and SVG: no script, no network.
const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export interface ConsoleAppOptions {
  ctx: AppContext;
  /** RECON_CONSOLE_URL: the address people use; its origin is the only one whose forms are accepted. */
  publicUrl?: URL;
  /** RECON_CONSOLE_TRUST_PROXY: whose X-Forwarded-For/-Proto/-Host headers to believe. */
  trustProxy?: boolean | string | number;
  oidc?: OidcSignIn;
  /** The address the console listens on (`--host`): a request naming it as Host is accepted too. */
  listenHost?: string;
  /** The sign-in limits of this process; a fresh one by default. */
  signInGuard?: SignInGuard;
}

declare module 'fastify' {
  interface FastifyRequest {
    session?: ConsoleSession;
  }
  interface FastifyContextConfig {
    /** Served without a signed-in session (sign-in page, assets). */
    public?: boolean;
  }
}

/** A refusal the hooks and handlers answer with its status and a page saying why. */
class ConsoleRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
// Dates outside these are no business date of this tool, and PostgreSQL refuses year 0.
const FIRST_DATE = '1970-01-01';
const LAST_DATE = '9999-12-31';

/** A date from a form or query: a real calendar date within range, else a 400 saying which. */
function consoleDate(value: string | undefined, field: string): string {
  const date = requireDate(value, field);
  if (date < FIRST_DATE || date > LAST_DATE) throw new UsageError(`${field} ${date} is out of range: use a date from ${FIRST_DATE} to ${LAST_DATE}.`);
  return date;
}

const CONTROL_CHARACTERS = new Set([...Array.from({ length: 32 }, (_, i) => i).filter((c) => c !== 9 && c !== 10 && c !== 13), 127]);

/** Whether any text of a query or form carries a character no field may hold (NUL and other controls but tab and newlines). */
function hasControlCharacter(value: unknown): boolean {
  if (typeof value === 'string') return [...value].some((ch) => CONTROL_CHARACTERS.has(ch.charCodeAt(0)));
  if (Array.isArray(value)) return value.some(hasControlCharacter);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasControlCharacter);
  return false;
}

/** Host names a browser may use for this console: loopback, RECON_CONSOLE_URL's host, the --host it listens on. */
function hostAllowed(hostHeader: string | undefined, publicUrl: URL | undefined, listenHost: string | undefined): boolean {
  if (hostHeader === undefined || hostHeader === '') return false;
  let url: URL;
  try {
    url = new URL(`http://${hostHeader}`);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '') return false;
  if (publicUrl !== undefined && url.hostname === publicUrl.hostname.toLowerCase()) return true;
  if (isLoopbackHost(url.hostname)) return true;
  const listen = listenHost?.replace(/^\[|\]$/g, '').toLowerCase();
  return listen !== undefined && !['0.0.0.0', '::', ''].includes(listen) && url.hostname.replace(/^\[|\]$/g, '') === listen;
}

/**
 * The review console as a Fastify application: security headers, session and CSRF hooks
 * registered once, then the pages and actions. `app.inject()` tests it without a socket.
 */
export async function buildConsoleApp(options: ConsoleAppOptions): Promise<FastifyInstance> {
  const { ctx } = options;
  const db = ctx.database.db;
  const app = Fastify({ logger: false, trustProxy: options.trustProxy ?? false, bodyLimit: 64 * 1024, routerOptions: { ignoreTrailingSlash: true } });
  await app.register(cookie);
  await app.register(formbody);

  const guard = options.signInGuard ?? new SignInGuard();
  // Forms are accepted from RECON_CONSOLE_URL's origin only; without it, from a loopback origin
  // on the port this console listens on. Never from what the request says about itself.
  const originAllowed = (origin: string): boolean => {
    if (options.publicUrl !== undefined) return origin === options.publicUrl.origin;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? String(address.port) : '80';
    return url.protocol === 'http:' && isLoopbackHost(url.hostname) && (url.port || '80') === port;
  };
  const describeAllowedOrigin = () => options.publicUrl?.origin ?? 'this console on a loopback address';
  const secureCookies = (request: FastifyRequest) => options.publicUrl?.protocol === 'https:' || request.protocol === 'https';
  const sessionCookieOf = (request: FastifyRequest) => (secureCookies(request) ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
  const style = numberStyleOf(ctx.config.locale);
  const pageOf = (request: FastifyRequest, notice?: PageContext['notice']): PageContext => ({ user: request.session?.user, csrfToken: request.session?.csrfToken, notice, timezone: ctx.config.timezone, style });
  const audit = (request: FastifyRequest, action: string, outcome: 'ok' | 'refused' | 'failed', target?: string, detail?: unknown) =>
    insertAudit(db, { at: ctx.clock.now(), userName: request.session?.user.name ?? null, address: request.ip, action, target: target ?? null, outcome, detail });

  // Expired sessions and sign-in attempts past their window are removed by the running console:
  // on a timer, and on a request once the injected clock has moved on by PURGE_EVERY_MS.
  let lastPurge: number | undefined;
  let purging: Promise<void> | undefined;
  const purge = async (): Promise<void> => {
    const now = ctx.clock.now();
    lastPurge = now.getTime();
    const sessions = await deleteExpiredSessions(db, now, new Date(now.getTime() - SESSION_IDLE_MS));
    const attempts = await deleteSignInAttemptsBefore(db, new Date(now.getTime() - SIGN_IN_WINDOW_MS));
    if (sessions + attempts > 0) ctx.logger.info({ sessions, attempts }, 'the console removed expired sessions and old sign-in attempts');
  };
  const purgeIfDue = async (): Promise<void> => {
    if (purging !== undefined || (lastPurge !== undefined && ctx.clock.now().getTime() - lastPurge < PURGE_EVERY_MS)) return;
    purging = purge()
      .catch((error: unknown) => ctx.logger.warn({ err: error }, 'the console could not remove expired sessions'))
      .finally(() => {
        purging = undefined;
      });
    await purging;
  };
  const purgeTimer = setInterval(() => void purgeIfDue(), PURGE_EVERY_MS);
  purgeTimer.unref();
  app.addHook('onClose', async () => {
    clearInterval(purgeTimer);
    await purging;
  });

  // DNS rebinding: a page of another site whose name now resolves to this machine sends its own
  // name as Host. Only the console's own names are answered, before any other hook or handler.
  app.addHook('onRequest', async (request, reply) => {
    if (!hostAllowed(request.headers.host, options.publicUrl, options.listenHost)) {
      return reply
        .code(421)
        .header('Cache-Control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(`Misdirected request: this console answers only for ${options.publicUrl?.host ?? 'loopback addresses'}${options.publicUrl === undefined ? ' (set RECON_CONSOLE_URL to the address people use)' : ''}.\n`);
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Content-Security-Policy', CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Cache-Control', 'no-store');
    if (options.publicUrl?.protocol === 'https:') reply.header('Strict-Transport-Security', 'max-age=31536000');
  });
  // A NUL byte or another control character in a field is a client's mistake (or probe): a 400
  // here, before it reaches a handler or the database.
  app.addHook('preValidation', async (request) => {
    if (hasControlCharacter(request.query) || hasControlCharacter(request.body) || request.url.includes('%00')) {
      throw new ConsoleRefusal(400, 'Refused: a field of this request holds a control character (such as a NUL byte). Nothing was changed.');
    }
  });

  // Every state-changing request: from this origin only (Origin, else Referer), then the session's
  // synchronizer token. Browsers send Origin with every POST; a client that sends neither header
  // still needs the token, which only a page of this console carries.
  app.addHook('preHandler', async (request) => {
    if (request.url.startsWith('/assets/')) return;
    await purgeIfDue();
    request.session = await resumeSession(ctx, request.cookies[sessionCookieOf(request)]);
    if (request.method !== 'POST') return;
    const origin = request.headers.origin ?? (request.headers.referer === undefined ? undefined : safeOrigin(request.headers.referer));
    if (origin !== undefined && !originAllowed(origin)) {
      await audit(request, `POST ${request.routeOptions.url ?? request.url}`, 'refused', undefined, { reason: 'cross-origin', origin });
      throw new ConsoleRefusal(403, `Refused: this form was sent from ${origin}, not from the console (${describeAllowedOrigin()}). Nothing was changed.`);
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    const token = typeof body._csrf === 'string' ? body._csrf : undefined;
    if (isPublic(request)) {
      if (!tokensEqual(token, request.cookies[LOGIN_CSRF_COOKIE] ?? '') || token === '') {
        throw new ConsoleRefusal(403, 'Refused: the sign-in form had expired or did not come from this console. Reload the page and sign in again.');
      }
      return;
    }
    if (request.session === undefined) throw new ConsoleRefusal(403, 'Refused: you are not signed in (or your session ended). Sign in and try again; nothing was changed.');
    if (!tokensEqual(token, request.session.csrfToken)) {
      await audit(request, `POST ${request.routeOptions.url ?? request.url}`, 'refused', undefined, { reason: 'missing or wrong CSRF token' });
      throw new ConsoleRefusal(403, 'Refused: the form carried no valid security token (CSRF). Reload the page and try again; nothing was changed.');
    }
  });
  // An auditor sees everything and acts on nothing: every state-changing request is refused
  // here, once, whatever its route (signing out aside).
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'POST' || request.session?.user.role !== 'auditor' || request.routeOptions.url === '/logout') return;
    const user = request.session.user;
    await audit(request, `POST ${request.routeOptions.url ?? request.url}`, 'refused', undefined, { reason: 'auditor role' });
    throw new ConsoleRefusal(403, `Refused: "${user.name}" has the auditor role and can look at everything but change nothing. Nothing was changed.`);
  });
  // Pages need a session; without one a reader is sent to the sign-in page.
  app.addHook('preHandler', async (request, reply) => {
    if (isPublic(request) || request.session !== undefined || request.url.startsWith('/assets/')) return;
    return reply.redirect(`/login`, 303);
  });

  app.setErrorHandler(async (error, request, reply) => {
    if (error instanceof ConsoleRefusal) {
      const title = error.status === 404 ? 'Not found' : error.status === 400 ? 'Bad request' : 'Refused';
      return reply.code(error.status).type('text/html; charset=utf-8').send(messagePage(title, error.message, pageOf(request), { href: '/day', text: 'Back to the day view' }));
    }
    // A client's bad input (an impossible or out-of-range date…): said on the page, logged at info at most.
    if (error instanceof UsageError) {
      ctx.logger.info({ url: request.routeOptions.url, reason: error.message }, 'the console refused a bad request');
      return reply.code(400).type('text/html; charset=utf-8').send(messagePage('Bad request', error.message, pageOf(request), { href: '/day', text: 'Back to the day view' }));
    }
    if ((error as { validation?: unknown }).validation !== undefined) {
      return reply.code(400).type('text/html; charset=utf-8').send(messagePage('Bad request', `The request was not understood: ${(error as Error).message}.`, pageOf(request)));
    }
    if ((error as { statusCode?: number }).statusCode !== undefined && (error as { statusCode: number }).statusCode < 500) {
      return reply.code((error as { statusCode: number }).statusCode).type('text/html; charset=utf-8').send(messagePage('Bad request', (error as Error).message, pageOf(request)));
    }
    ctx.logger.error({ err: error, url: request.routeOptions.url }, 'the console could not answer a request');
    return reply.code(500).type('text/html; charset=utf-8').send(messagePage('Something went wrong', error instanceof ReconError ? error.message : 'The console could not answer this request; the log has the details.', pageOf(request)));
  });
  app.setNotFoundHandler(async (request, reply) => reply.code(404).type('text/html; charset=utf-8').send(messagePage('Not found', `There is no page ${request.url}.`, pageOf(request), { href: '/day', text: 'Back to the day view' })));

  app.get('/assets/console.js', { config: { public: true } }, async (_request, reply) => reply.header('Cache-Control', 'max-age=300').type('text/javascript; charset=utf-8').send(CONSOLE_JS));
  app.get('/assets/console.css', { config: { public: true } }, async (_request, reply) => reply.header('Cache-Control', 'max-age=300').type('text/css; charset=utf-8').send(CONSOLE_CSS));
  // No icon: an explicit empty answer, so browsers stop asking and no 404 is logged.
  app.get('/favicon.ico', { config: { public: true } }, async (_request, reply) => reply.code(204).header('Cache-Control', 'max-age=86400').send());
  app.get('/', async (_request, reply) => reply.redirect('/day', 303));
  registerOverviewRoutes(app, { ctx, pageOf });
  registerEvidenceRoutes(app, { ctx, audit, refuse: (status, message) => new ConsoleRefusal(status, message) });
  registerItemsRoutes(app, { ctx, audit, refuse: (status, message) => new ConsoleRefusal(status, message), secureCookies });

  const showLogin = async (request: FastifyRequest, reply: FastifyReply, status = 200, notice?: PageContext['notice'], userName?: string) => {
    // One token per browser until it signs in: a second tab or a repeated load keeps the first valid.
    const held = request.cookies[LOGIN_CSRF_COOKIE];
    const loginCsrf = held !== undefined && /^[A-Za-z0-9_-]{32}$/.test(held) ? held : randomBytes(24).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, loginCsrf, { path: '/login', httpOnly: true, sameSite: 'strict', secure: secureCookies(request) });
    return reply.code(status).type('text/html; charset=utf-8').send(loginPage({ notice, loginCsrf, userName, oidc: options.oidc !== undefined }));
  };
  app.get('/login', { config: { public: true } }, async (request, reply) => (request.session !== undefined ? reply.redirect('/day', 303) : showLogin(request, reply)));
  app.post<{ Body: { user?: string; password?: string } }>(
    '/login',
    { config: { public: true }, schema: { body: { type: 'object', properties: { user: { type: 'string', maxLength: 200 }, password: { type: 'string', maxLength: 1000 }, _csrf: { type: 'string' } } } } },
    async (request, reply) => {
      const name = (request.body.user ?? '').trim();
      const password = request.body.password ?? '';
      if (name === '' || password === '') return showLogin(request, reply, 400, { kind: 'error', text: 'Give your user name and your password.' }, name);
      let user;
      try {
        user = await authenticate(ctx, name, password, request.ip, guard);
      } catch (error) {
        if (error instanceof SignInThrottledError) {
          reply.header('Retry-After', String(Math.max(1, Math.ceil((error.retryAt.getTime() - ctx.clock.now().getTime()) / 1000))));
          return showLogin(request, reply, 429, { kind: 'error', text: error.message }, name);
        }
        if (error instanceof SignInBusyError) {
          reply.header('Retry-After', String(error.retryAfterSeconds));
          return showLogin(request, reply, 503, { kind: 'error', text: error.message }, name);
        }
        throw error;
      }
      if (user === undefined) return showLogin(request, reply, 401, { kind: 'error', text: 'The user name or password is wrong (or the user is disabled).' }, name);
      return signIn(request, reply, user);
    },
  );
  const signIn = async (request: FastifyRequest, reply: FastifyReply, user: Parameters<typeof startSession>[1]) => {
    // The browser's earlier session, whoever's it was, ends: one browser, one session.
    const earlier = request.cookies[sessionCookieOf(request)];
    if (earlier !== undefined) await endSession(ctx, earlier);
    const session = await startSession(ctx, user, request.ip);
    reply.setCookie(sessionCookieOf(request), session.id, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(request) });
    reply.clearCookie(LOGIN_CSRF_COOKIE, { path: '/login' });
    return reply.redirect('/day', 303);
  };
  app.post('/logout', async (request, reply) => {
    await endSession(ctx, request.session!.id);
    await audit(request, 'sign-out', 'ok');
    reply.clearCookie(sessionCookieOf(request), { path: '/', secure: secureCookies(request) });
    return reply.redirect('/login', 303);
  });

  // A local user changes their own password: the current one first, then the new one twice.
  const passwordBody = {
    type: 'object',
    properties: { current: { type: 'string', maxLength: 1000 }, next: { type: 'string', maxLength: 1000 }, repeated: { type: 'string', maxLength: 1000 }, _csrf: { type: 'string' } },
  } as const;
  app.get<{ Querystring: { done?: string } }>('/account/password', async (request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(changePasswordPage(request.session!.user.source === 'local', pageOf(request, request.query.done === '1' ? { kind: 'ok', text: 'Your password was changed; your other sessions ended.' } : undefined))),
  );
  app.post<{ Body: { current?: string; next?: string; repeated?: string } }>('/account/password', { schema: { body: passwordBody } }, async (request, reply) => {
    const session = request.session!;
    const address = request.ip;
    try {
      await changeOwnPassword(
        ctx,
        session.user,
        { current: request.body.current ?? '', next: request.body.next ?? '', repeated: request.body.repeated ?? '', keepSessionSha256: sessionKeyOf(session.id), address },
        async (hash) => {
          const place = guard.gate.reserve(address);
          if (place === undefined) throw new SignInBusyError();
          return place.run(() => verifyPassword(request.body.current ?? '', hash));
        },
      );
    } catch (error) {
      if (error instanceof SignInBusyError) {
        reply.header('Retry-After', String(error.retryAfterSeconds));
        return reply.code(503).type('text/html; charset=utf-8').send(changePasswordPage(true, pageOf(request, { kind: 'error', text: error.message })));
      }
      if (!(error instanceof PasswordChangeRefusedError)) throw error;
      return reply.code(400).type('text/html; charset=utf-8').send(changePasswordPage(session.user.source === 'local', pageOf(request, { kind: 'error', text: error.message })));
    }
    return reply.redirect('/account/password?done=1', 303);
  });

  if (options.oidc !== undefined) options.oidc.register(app, { secureCookies, signIn, audit });

  const renderDay = async (request: FastifyRequest, date: string, notice?: PageContext['notice'], pageNumber = 1) => {
    await detectSignoffChanges(ctx);
    const everyAccount = await consoleAccounts(ctx);
    // A page of accounts at a time (200 accounts × 50 currencies is 10,000 rows), with the date's counts.
    const pages = Math.max(1, Math.ceil(everyAccount.length / DAY_PAGE_ACCOUNTS));
    const current = Math.min(pageNumber, pages);
    const accounts = everyAccount.slice((current - 1) * DAY_PAGE_ACCOUNTS, current * DAY_PAGE_ACCOUNTS);
    const today = todayOf(ctx).date;
    // The page's results, and the date's counts from the database: 10,000 results are not read to show 25 accounts.
    const results = await listResultsOfDate(db, date, accounts);
    const counted = pages === 1 ? undefined : await countResultsOfDate(db, date);
    const cases = new Map((await listCasesByIds(db, [...new Set(results.flatMap((r) => (r.caseId === null ? [] : [r.caseId])))])).map((c) => [c.id, c]));
    const latest = latestClosedDateOf(ctx);
    const window = businessCalendarOf(ctx.config).windowOf(date);
    // Until the window closes a date may not be settled yet: the accounts still waiting on their cut-off or
    // capture window, so the page says until when rather than "not reconciled" and offers no sign-off to refuse.
    const waiting =
      ctx.clock.now() < window.closesAt ? (await findUnsettledAccounts(ctx, everyAccount, date)).filter((u) => u.state === 'capture_window' || u.state === 'day_open').map((u) => u.account) : [];
    return dayPage(
      {
        date,
        previous: previousDate(date),
        next: date < latest ? addDays(date, 1) : undefined,
        accounts,
        captures: await listCapturesOfDate(db, date, businessCalendarOf(ctx.config)),
        books: await listBooksOfDate(db, date),
        results,
        cases,
        snoozes: await listRunningSnoozes(db, [...cases.keys()], date),
        ...(await signoffWithProblems(ctx, date)),
        today,
        ...(waiting.length === 0 ? {} : { window: { cutoffAt: window.cutoffAt, closesAt: window.closesAt, now: ctx.clock.now(), accounts: new Set(waiting) } }),
        ...(ctx.database.kind === 'postgres' ? { queued: await countQueuedOfDate(db, ctx.config.queue.schema, date) } : {}),
        statements: new Map(
          await Promise.all(
            ctx.config.bankAccounts.map(async (b) => {
              const s = await findClosingStatement(db, b.name, date);
              return [b.name, s === undefined ? null : { statementId: s.statementId, proof: s.proof }] as const;
            }),
          ),
        ),
        trends: await recentTrends(ctx, accounts, date),
        explain: await loadExplain(ctx, accounts, date, results),
        paging:
          pages === 1
            ? undefined
            : {
                page: current,
                pages,
                first: (current - 1) * DAY_PAGE_ACCOUNTS + 1,
                totalAccounts: everyAccount.length,
                totalResults: counted?.results ?? 0,
                needAttention: counted?.notMatched ?? 0,
              },
      },
      pageOf(request, notice),
    );
  };
  app.get<{ Querystring: { date?: string; page?: number } }>(
    '/day',
    { schema: { querystring: { type: 'object', properties: { date: { type: 'string', pattern: DATE }, page: { type: 'integer', minimum: 1, maximum: 100_000 } } } } },
    async (request, reply) => {
      // Without a date: the latest date with results or owed work, so a break is what one sees first.
      const date = request.query.date === undefined || request.query.date === '' ? await defaultDayOf(ctx) : consoleDate(request.query.date, 'date');
      return reply.type('text/html; charset=utf-8').send(await renderDay(request, date, takeFlashNotice(request, reply), request.query.page ?? 1));
    },
  );

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/cases',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            state: { type: 'string', enum: ['', ...CASE_STATES, 'active'] },
            account: { type: 'string', maxLength: 64 },
            currency: { type: 'string', pattern: '^([A-Za-z]{3})?$' },
            kind: { type: 'string', enum: ['', ...CASE_KINDS] },
            assignee: { type: 'string', maxLength: 200 },
            age: { type: 'string', enum: ['', ...AGE_BUCKETS] },
            sort: { type: 'string', enum: ['', 'age', 'size'] },
            page: { type: 'string', pattern: '^([1-9][0-9]{0,5})?$' },
          },
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
      const filter: CasesFilter = { state: blank(q.state), account: blank(q.account), currency: blank(q.currency)?.toUpperCase(), kind: blank(q.kind), assignee: blank(q.assignee), age: blank(q.age), sort: q.sort === 'size' ? 'size' : 'age' };
      const today = todayOf(ctx).date;
      const states = filter.state === undefined ? undefined : filter.state === 'active' ? (['open', 'acknowledged'] as const) : [filter.state as (typeof CASE_STATES)[number]];
      let found = await listCases(db, { states, account: filter.account, currency: filter.currency, kind: filter.kind as (typeof CASE_KINDS)[number] | undefined });
      if (filter.assignee !== undefined) found = found.filter((c) => (c.assignee ?? '').toLowerCase() === filter.assignee!.toLowerCase());
      if (filter.age !== undefined) found = found.filter((c) => ageBucketOf(caseAgeDays(c, today)) === filter.age);
      const abs = (v: bigint | null) => (v === null ? -1n : v < 0n ? -v : v);
      found.sort((a, b) => (filter.sort === 'size' ? (abs(b.latestDifference) > abs(a.latestDifference) ? 1 : abs(b.latestDifference) < abs(a.latestDifference) ? -1 : 0) : caseAgeDays(b, today) - caseAgeDays(a, today)) || a.id - b.id);
      return reply
        .type('text/html; charset=utf-8')
        .send(
          casesPage(
            found,
            filter,
            { today, accounts: await consoleAccounts(ctx), kinds: CASE_KINDS, states: [...CASE_STATES, 'active'], ages: AGE_BUCKETS, page: q.page === undefined || q.page === '' ? 1 : Number(q.page) },
            pageOf(request),
          ),
        );
    },
  );

  // "Assign" offers and accepts only people who can sign in: existing, active users.
  const activeUserNames = async () => (await listUsers(db)).filter((u) => u.disabledAt === null).map((u) => u.name);
  const renderCase = async (request: FastifyRequest, id: number, notice?: PageContext['notice']) => {
    const c = await findCase(db, id);
    if (c === undefined) throw new ConsoleRefusal(404, `There is no case #${id}.`);
    const today = todayOf(ctx).date;
    const snooze = (await listRunningSnoozes(db, [id], today)).get(id);
    // The case's account on its latest date: what explains the difference there, and the hand on it.
    const results = (await listResultsOfDate(db, c.lastSeenOn, [c.account])).filter((r) => c.currency === null || r.currency === c.currency);
    const explained = (await loadExplain(ctx, [c.account], c.lastSeenOn, results)).get(c.account)!;
    const explain = { ...explained, currencies: c.currency === null ? explained.currencies : [c.currency], items: explained.items.filter((i) => c.currency === null || i.currency === c.currency) };
    return casePage(c, await listOccurrences(db, id), await listEvents(db, id), await listCaseEvidence(db, id), today, { ...pageOf(request, notice), assignees: await activeUserNames() }, { explain, results, trail: await loadDifferenceTrail(db, ctx.config, c) }, snooze);
  };
  const idParams = { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 999_999_999 } }, required: ['id'] } as const;
  app.get<{ Params: { id: number }; Querystring: { done?: string } }>('/cases/:id', { schema: { params: idParams } }, async (request, reply) => {
    const done = request.query.done;
    const notice =
      takeFlashNotice(request, reply) ?? (done !== undefined && (MANUAL_CASE_ACTIONS as readonly string[]).includes(done) ? { kind: 'ok' as const, text: `Done: ${done}, recorded as ${request.session!.user.name}.` } : undefined);
    return reply.type('text/html; charset=utf-8').send(await renderCase(request, request.params.id, notice));
  });

  // Snooze (issue 45): not a change of state, so not one of the state machine's actions; a note and an end are required.
  app.post<{ Params: { id: number }; Body: { note?: string; until?: string } }>(
    '/cases/:id/snooze',
    { schema: { params: idParams, body: { type: 'object', properties: { note: { type: 'string', maxLength: 2000 }, until: { type: 'string', maxLength: 10 }, _csrf: { type: 'string' } } } } },
    async (request, reply) => {
      const { id } = request.params;
      const user = request.session!.user;
      if (!mayActOnCases(user.role)) {
        await audit(request, 'case.snooze', 'refused', `case #${id}`, { reason: `${user.role} role` });
        throw new ConsoleRefusal(403, `Refused: "${user.name}" has the ${user.role} role and can look at everything but change nothing.`);
      }
      const { note, until } = request.body;
      const invalid = Object.entries({ note, until }).find(([, v]) => v !== undefined && NOT_TEXT.test(v));
      if (invalid !== undefined) {
        return reply.code(400).type('text/html; charset=utf-8').send(await renderCase(request, id, { kind: 'error', text: `Refused: the ${invalid[0]} is not valid text (it holds a lone surrogate or a NUL character). Nothing was changed.` }));
      }
      const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
      try {
        await snoozeCase(ctx, {
          caseId: id,
          until: blank(until),
          note: blank(note),
          actor: user.name,
          alsoInTransaction: (trx) =>
            insertAudit(trx, { at: ctx.clock.now(), userName: user.name, address: request.ip, action: 'case.snooze', target: `case #${id}`, outcome: 'ok', detail: { note: blank(note) ?? null, until: blank(until) ?? null } }),
        });
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        await audit(request, 'case.snooze', 'refused', `case #${id}`, { reason: error.message });
        const text = error.message.replace('cases snooze needs --note TEXT', 'A snooze needs a note').replace('cases snooze needs --until DATE', 'A snooze needs an Until date').replaceAll('--until', 'Until').replace('--note TEXT', 'a note');
        setFlashNotice(reply, { kind: 'error', text }, secureCookies(request));
        return reply.redirect(`/cases/${id}`, 303);
      }
      setFlashNotice(reply, { kind: 'ok', text: `Snoozed until ${blank(until)!}, recorded as ${user.name}: it is not announced again until then unless it changes materially.` }, secureCookies(request));
      return reply.redirect(`/cases/${id}`, 303);
    },
  );

  app.post<{ Params: { id: number; action: ManualCaseAction }; Body: { note?: string; to?: string; due?: string; until?: string } }>(
    '/cases/:id/:action',
    {
      schema: {
        params: { type: 'object', properties: { id: idParams.properties.id, action: { type: 'string', enum: [...MANUAL_CASE_ACTIONS] } }, required: ['id', 'action'] },
        body: { type: 'object', properties: { note: { type: 'string', maxLength: 4000 }, to: { type: 'string', maxLength: 200 }, due: { type: 'string', maxLength: 10 }, until: { type: 'string', maxLength: 10 }, _csrf: { type: 'string' } } },
      },
    },
    async (request, reply) => {
      const { id, action } = request.params;
      const user = request.session!.user;
      if (!mayActOnCases(user.role)) {
        await audit(request, `case.${action}`, 'refused', `case #${id}`, { reason: `${user.role} role` });
        throw new ConsoleRefusal(403, `Refused: "${user.name}" has the ${user.role} role and can look at everything but change nothing.`);
      }
      const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v);
      const { note, to, due, until } = request.body;
      // Text that is not valid (a lone UTF-16 surrogate, a NUL) cannot be stored nor hashed the
      // same way twice: the request is malformed, logged and answered 400, and nothing is written.
      const invalid = Object.entries({ note, to, due, until }).find(([, v]) => v !== undefined && NOT_TEXT.test(v));
      if (invalid !== undefined) {
        request.log.warn({ case: id, action, field: invalid[0] }, 'a case action with a field that is not valid text was refused');
        return reply.code(400).type('text/html; charset=utf-8').send(await renderCase(request, id, { kind: 'error', text: `Refused: the ${invalid[0]} is not valid text (it holds a lone surrogate or a NUL character). Nothing was changed.` }));
      }
      if (action === 'assign' && blank(to) !== undefined && !(await activeUserNames()).includes(to!.trim())) {
        await audit(request, `case.${action}`, 'refused', `case #${id}`, { reason: 'not an active user', to });
        return reply.code(400).type('text/html; charset=utf-8').send(await renderCase(request, id, { kind: 'error', text: `Refused: "${to!.trim()}" is not an active console user; assign the case to one of the people listed.` }));
      }
      const missing = missingFieldRefusal(action, { note: blank(note), to: blank(to) });
      if (missing !== undefined) {
        await audit(request, `case.${action}`, 'refused', `case #${id}`, { reason: missing });
        setFlashNotice(reply, { kind: 'error', text: missing }, secureCookies(request));
        return reply.redirect(`/cases/${id}`, 303);
      }
      try {
        // The event and its audit row commit together.
        await applyCaseAction(ctx, {
          caseId: id,
          action,
          actor: user.name,
          note: blank(note),
          to: blank(to),
          due: blank(due),
          until: blank(until),
          alsoInTransaction: (trx) =>
            insertAudit(trx, { at: ctx.clock.now(), userName: user.name, address: request.ip, action: `case.${action}`, target: `case #${id}`, outcome: 'ok', detail: { note: blank(note) ?? null } }),
        });
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        await audit(request, `case.${action}`, 'refused', `case #${id}`, { reason: error.message });
        // The CLI's message names --note and friends; on a page the fields are what people see.
        const text = error.message.replace('--note TEXT', 'a note').replace('--to NAME', 'a name in "To"').replaceAll('--until', 'Until').replaceAll('--due', 'Due');
        // Post-redirect-get: the case page shows why, and a refresh does not send the form again.
        setFlashNotice(reply, { kind: 'error', text }, secureCookies(request));
        return reply.redirect(`/cases/${id}`, 303);
      }
      // A reopened case voids the sign-off of the dates it was seen on: said at once, not at the worker's next check.
      await detectSignoffChanges(ctx);
      return reply.redirect(`/cases/${id}?done=${action}`, 303);
    },
  );

  const dateBody = { type: 'object', properties: { date: { type: 'string', pattern: DATE }, _csrf: { type: 'string' } }, required: ['date'] } as const;
  const signoffStep = (step: 'prepare' | 'approve' | 'reopen') => async (request: FastifyRequest<{ Body: { date: string; note?: string } }>, reply: FastifyReply) => {
    const date = consoleDate(request.body.date, 'date');
    const user = request.session!.user;
    try {
      const signoff =
        step === 'prepare' ? await prepareSignoff(ctx, user, date, request.ip) : step === 'approve' ? await approveSignoff(ctx, user, date, request.ip) : await reopenSignoff(ctx, user, date, request.body.note, request.ip);
      const text =
        step === 'prepare'
          ? `Sign-off #${signoff.id} prepared by ${user.name}: it now needs an approver's "Approve sign-off".`
          : step === 'approve'
            ? `Sign-off #${signoff.id} approved by ${user.name}: ${date} is locked.`
            : `Sign-off #${signoff.id} reopened by ${user.name}: ${date} is unlocked and must be signed again.`;
      setFlashNotice(reply, { kind: 'ok', text }, secureCookies(request));
    } catch (error) {
      // A date not settled yet is a conflict with the date's state (409), a rule refusing the person 403.
      if (error instanceof DateNotSettledError) return reply.code(409).type('text/html; charset=utf-8').send(await renderDay(request, date, { kind: 'error', text: `Refused: ${error.message}` }));
      if (!(error instanceof SignoffRefusedError)) throw error;
      setFlashNotice(reply, { kind: 'error', text: `Refused: ${error.message.replace(' (--note TEXT)', '')}` }, secureCookies(request));
    }
    // Post-redirect-get: the day view shows the outcome; a refresh reloads it, never posts again.
    return reply.redirect(`/day?date=${date}`, 303);
  };
  const noteBody = { type: 'object', properties: { date: { type: 'string', pattern: DATE }, note: { type: 'string', maxLength: 4000 }, _csrf: { type: 'string' } }, required: ['date'] } as const;
  app.post('/signoffs/prepare', { schema: { body: dateBody } }, signoffStep('prepare'));
  app.post('/signoffs/approve', { schema: { body: dateBody } }, signoffStep('approve'));
  app.post('/signoffs/reopen', { schema: { body: noteBody } }, signoffStep('reopen'));

  app.get<{ Params: { id: number } }>('/signoffs/:id/report', { schema: { params: idParams } }, async (request, reply) => {
    let report: Awaited<ReturnType<typeof readSealedReport>>;
    try {
      report = await readSealedReport(db, request.params.id);
    } catch (error) {
      if (!(error instanceof SealMismatchError)) throw error;
      await audit(request, 'signoff.report', 'refused', `sign-off #${request.params.id}`, { reason: error.message });
      throw new ConsoleRefusal(409, `${SEAL_MISMATCH}: sign-off #${request.params.id} is not served. Run "wallet-recon signoff verify" and restore the database from a backup.`);
    }
    if (report === undefined) throw new ConsoleRefusal(404, `There is no sign-off #${request.params.id}.`);
    const signoff = (await findSignoff(db, request.params.id))!;
    const broken = (await problemsToShow(db, ctx.config, [signoff.id])).get(signoff.id);
    await audit(request, 'signoff.report', 'ok', `sign-off #${request.params.id}`, broken === undefined ? undefined : { does_not_verify: broken });
    // The stored bytes as they were signed (their hash checked just now); the approval, made after
    // sealing, travels beside them in headers, as on the day page — only when the sign-off's steps
    // verify: a broken one is served with what is wrong with it instead of whom it names.
    reply
      .header('Content-Security-Policy', REPORT_CSP)
      .header('Content-Disposition', `inline; filename="reconciliation-${report.businessDate}-signoff-${request.params.id}.html"`)
      .header('X-Report-SHA256', report.sha256);
    if (broken === undefined) {
      reply
        .header('X-Signoff-Prepared', `${signoff.preparedBy} ${signoff.preparedAt.toISOString()}`)
        .header('X-Signoff-Approved', signoff.approvedBy === null ? 'not approved' : `${signoff.approvedBy} ${signoff.approvedAt!.toISOString()}`);
    } else {
      reply.header('X-Signoff-Does-Not-Verify', headerText(broken));
    }
    return reply.type('text/html; charset=utf-8').send(Buffer.from(report.html, 'utf8'));
  });

  return app;
}

/** Routes served without a session; the not-found handler's context may have no config at all. */
function isPublic(request: FastifyRequest): boolean {
  return (request.routeOptions.config as { public?: boolean } | undefined)?.public === true;
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/** The date's capture and settle jobs still queued; none where the queue's schema is absent (not migrated). */
async function countQueuedOfDate(db: Kysely<Database>, schema: string, date: string): Promise<{ waiting: number; active: number } | undefined> {
  if (!(await hasQueueSchema(db, schema))) return undefined;
  const capture = await countOpenJobsOfDate(db, schema, 'capture', date);
  const settle = await countOpenJobsOfDate(db, schema, 'settle-date', date);
  return { waiting: capture.waiting + settle.waiting, active: capture.active + settle.active };
}

/** A date's sign-off state with the problems of those of its sign-offs that do not verify. */
async function signoffWithProblems(ctx: AppContext, date: string) {
  const signoff = await signoffStateOf(ctx, date);
  return { signoff, signoffProblems: await problemsToShow(ctx.database.db, ctx.config, signoff.history.map((s) => s.id)) };
}

/** Text fit for a header value: printable ASCII on one line (anything else written as "?"). */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 1000);
}
