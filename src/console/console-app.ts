import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { applyCaseAction, MANUAL_CASE_ACTIONS, type ManualCaseAction } from '../cases/case-actions.js';
import { AGE_BUCKETS, ageBucketOf, caseAgeDays, CASE_KINDS, CASE_STATES } from '../cases/case-model.js';
import { listBooksOfDate, listCapturesOfDate } from '../db/console-views.repository.js';
import { insertAudit } from '../db/console.repository.js';
import { findCase, listCaseEvidence, listCases, listCasesByIds, listEvents, listOccurrences } from '../db/reconciliation-case.repository.js';
import { findSignoff } from '../db/signoff.repository.js';
import { reopenSignoff } from '../signoff/reopen.js';
import { readSealedReport, SEAL_MISMATCH } from '../signoff/seal.js';
import { DateNotSettledError, ReconError, SealMismatchError, UsageError } from '../errors.js';
import { latestClosedDateOf, todayOf } from '../reconciliation/business-dates.js';
import { addDays } from '../business-date/zoned-time.js';
import { previousDate } from '../clock.js';
import { loadReport } from '../reports/report-data.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { authenticate, SignInThrottledError } from './console-users.js';
import { casePage, casesPage, dayPage, loginPage, messagePage, type CasesFilter, type PageContext } from './pages.js';
import { mayActOnCases } from './roles.js';
import { endSession, resumeSession, startSession, tokensEqual, type ConsoleSession } from './sessions.js';
import { approveSignoff, detectSignoffChanges, prepareSignoff, requireDate, signoffStateOf, SignoffRefusedError } from '../signoff/signoff-service.js';
import type { OidcSignIn } from './oidc.js';

export const SESSION_COOKIE = 'recon_session';
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

  const expectedOrigin = (request: FastifyRequest) => options.publicUrl?.origin ?? `${request.protocol}://${request.host}`;
  const secureCookies = (request: FastifyRequest) => options.publicUrl?.protocol === 'https:' || request.protocol === 'https';
  const pageOf = (request: FastifyRequest, notice?: PageContext['notice']): PageContext => ({ user: request.session?.user, csrfToken: request.session?.csrfToken, notice });
  const audit = (request: FastifyRequest, action: string, outcome: 'ok' | 'refused' | 'failed', target?: string, detail?: unknown) =>
    insertAudit(db, { at: ctx.clock.now(), userName: request.session?.user.name ?? null, address: request.ip, action, target: target ?? null, outcome, detail });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('Content-Security-Policy', CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Cache-Control', 'no-store');
    if (options.publicUrl?.protocol === 'https:') reply.header('Strict-Transport-Security', 'max-age=31536000');
  });

  // Every state-changing request: from this origin only (Origin, else Referer), then the session's
  // synchronizer token. Browsers send Origin with every POST; a client that sends neither header
  // still needs the token, which only a page of this console carries.
  app.addHook('preHandler', async (request) => {
    if (request.url.startsWith('/assets/')) return;
    request.session = await resumeSession(ctx, request.cookies[SESSION_COOKIE]);
    if (request.method !== 'POST') return;
    const origin = request.headers.origin ?? (request.headers.referer === undefined ? undefined : safeOrigin(request.headers.referer));
    if (origin !== undefined && origin !== expectedOrigin(request)) {
      await audit(request, `POST ${request.routeOptions.url ?? request.url}`, 'refused', undefined, { reason: 'cross-origin', origin });
      throw new ConsoleRefusal(403, `Refused: this form was sent from ${origin}, not from the console (${expectedOrigin(request)}). Nothing was changed.`);
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
  // Pages need a session; without one a reader is sent to the sign-in page.
  app.addHook('preHandler', async (request, reply) => {
    if (isPublic(request) || request.session !== undefined || request.url.startsWith('/assets/')) return;
    return reply.redirect(`/login`, 303);
  });

  app.setErrorHandler(async (error, request, reply) => {
    if (error instanceof ConsoleRefusal) {
      return reply.code(error.status).type('text/html; charset=utf-8').send(messagePage(error.status === 404 ? 'Not found' : 'Refused', error.message, pageOf(request), { href: '/day', text: 'Back to the day view' }));
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
  app.get('/', async (_request, reply) => reply.redirect('/day', 303));

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
        user = await authenticate(ctx, name, password, request.ip);
      } catch (error) {
        if (error instanceof SignInThrottledError) return showLogin(request, reply, 429, { kind: 'error', text: error.message }, name);
        throw error;
      }
      if (user === undefined) return showLogin(request, reply, 401, { kind: 'error', text: 'The user name or password is wrong (or the user is disabled).' }, name);
      return signIn(request, reply, user);
    },
  );
  const signIn = async (request: FastifyRequest, reply: FastifyReply, user: Parameters<typeof startSession>[1]) => {
    const session = await startSession(ctx, user, request.ip);
    reply.setCookie(SESSION_COOKIE, session.id, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(request) });
    reply.clearCookie(LOGIN_CSRF_COOKIE, { path: '/login' });
    return reply.redirect('/day', 303);
  };
  app.post('/logout', async (request, reply) => {
    await endSession(ctx, request.session!.id);
    await audit(request, 'sign-out', 'ok');
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });

  if (options.oidc !== undefined) options.oidc.register(app, { secureCookies, signIn, audit });

  const renderDay = async (request: FastifyRequest, date: string, notice?: PageContext['notice']) => {
    await detectSignoffChanges(ctx);
    const accounts = ctx.config.accounts.map((a) => a.name);
    const today = todayOf(ctx).date;
    const report = await loadReport(db, { from: date, to: date }, { accounts, today });
    const results = report.results.filter((r) => accounts.includes(r.account));
    const cases = new Map((await listCasesByIds(db, [...new Set(results.flatMap((r) => (r.caseId === null ? [] : [r.caseId])))])).map((c) => [c.id, c]));
    const latest = latestClosedDateOf(ctx);
    return dayPage(
      {
        date,
        previous: previousDate(date),
        next: date < latest ? addDays(date, 1) : undefined,
        accounts,
        captures: await listCapturesOfDate(db, date),
        books: await listBooksOfDate(db, date),
        results,
        cases,
        signoff: await signoffStateOf(ctx, date),
        today,
      },
      pageOf(request, notice),
    );
  };
  app.get<{ Querystring: { date?: string } }>('/day', { schema: { querystring: { type: 'object', properties: { date: { type: 'string', pattern: DATE } } } } }, async (request, reply) => {
    const date = request.query.date === undefined || request.query.date === '' ? latestClosedDateOf(ctx) : requireDate(request.query.date, 'date');
    return reply.type('text/html; charset=utf-8').send(await renderDay(request, date));
  });

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
        .send(casesPage(found, filter, { today, accounts: ctx.config.accounts.map((a) => a.name), kinds: CASE_KINDS, states: [...CASE_STATES, 'active'], ages: AGE_BUCKETS }, pageOf(request)));
    },
  );

  const renderCase = async (request: FastifyRequest, id: number, notice?: PageContext['notice']) => {
    const c = await findCase(db, id);
    if (c === undefined) throw new ConsoleRefusal(404, `There is no case #${id}.`);
    return casePage(c, await listOccurrences(db, id), await listEvents(db, id), await listCaseEvidence(db, id), todayOf(ctx).date, pageOf(request, notice));
  };
  const idParams = { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 999_999_999 } }, required: ['id'] } as const;
  app.get<{ Params: { id: number }; Querystring: { done?: string } }>('/cases/:id', { schema: { params: idParams } }, async (request, reply) => {
    const done = request.query.done;
    const notice = done !== undefined && (MANUAL_CASE_ACTIONS as readonly string[]).includes(done) ? { kind: 'ok' as const, text: `Done: ${done}, recorded as ${request.session!.user.name}.` } : undefined;
    return reply.type('text/html; charset=utf-8').send(await renderCase(request, request.params.id, notice));
  });

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
        await audit(request, `case.${action}`, 'refused', `case #${id}`, { reason: 'viewer role' });
        throw new ConsoleRefusal(403, `Refused: "${user.name}" has the viewer role and can look at everything but change nothing.`);
      }
      const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v);
      const { note, to, due, until } = request.body;
      try {
        await applyCaseAction(ctx, { caseId: id, action, actor: user.name, note: blank(note), to: blank(to), due: blank(due), until: blank(until) });
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        await audit(request, `case.${action}`, 'refused', `case #${id}`, { reason: error.message });
        // The CLI's message names --note and friends; on a page the fields are what people see.
        const text = error.message.replace('--note TEXT', 'a note').replace('--to NAME', 'a name in "To"').replaceAll('--until', 'Until').replaceAll('--due', 'Due');
        return reply.code(400).type('text/html; charset=utf-8').send(await renderCase(request, id, { kind: 'error', text }));
      }
      await audit(request, `case.${action}`, 'ok', `case #${id}`, { note: blank(note) ?? null });
      // A reopened case voids the sign-off of the dates it was seen on: said at once, not at the worker's next check.
      await detectSignoffChanges(ctx);
      return reply.redirect(`/cases/${id}?done=${action}`, 303);
    },
  );

  const dateBody = { type: 'object', properties: { date: { type: 'string', pattern: DATE }, _csrf: { type: 'string' } }, required: ['date'] } as const;
  const signoffStep = (step: 'prepare' | 'approve' | 'reopen') => async (request: FastifyRequest<{ Body: { date: string; note?: string } }>, reply: FastifyReply) => {
    const date = requireDate(request.body.date, 'date');
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
      return reply.type('text/html; charset=utf-8').send(await renderDay(request, date, { kind: 'ok', text }));
    } catch (error) {
      // A date not settled yet is a conflict with the date's state (409), a rule refusing the person 403.
      if (error instanceof DateNotSettledError) return reply.code(409).type('text/html; charset=utf-8').send(await renderDay(request, date, { kind: 'error', text: `Refused: ${error.message}` }));
      if (!(error instanceof SignoffRefusedError)) throw error;
      const text = error.message.replace(' (--note TEXT)', '');
      return reply.code(403).type('text/html; charset=utf-8').send(await renderDay(request, date, { kind: 'error', text: `Refused: ${text}` }));
    }
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
    await audit(request, 'signoff.report', 'ok', `sign-off #${request.params.id}`);
    // The stored bytes as they were signed (their hash checked just now); the approval, made after
    // sealing, travels beside them in headers, as on the day page.
    return reply
      .header('Content-Security-Policy', REPORT_CSP)
      .header('Content-Disposition', `inline; filename="reconciliation-${report.businessDate}-signoff-${request.params.id}.html"`)
      .header('X-Report-SHA256', report.sha256)
      .header('X-Signoff-Prepared', `${signoff.preparedBy} ${signoff.preparedAt.toISOString()}`)
      .header('X-Signoff-Approved', signoff.approvedBy === null ? 'not approved' : `${signoff.approvedBy} ${signoff.approvedAt!.toISOString()}`)
      .type('text/html; charset=utf-8')
      .send(Buffer.from(report.html, 'utf8'));
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
