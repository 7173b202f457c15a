import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { UsageError } from '../errors.js';
import { mayExportEvidence } from './roles.js';

/** A console refusal with its HTTP status (the console's error handler renders it). */
export interface EvidenceRouteDeps {
  ctx: AppContext;
  audit: (request: FastifyRequest, action: string, outcome: 'ok' | 'refused' | 'failed', target?: string, detail?: unknown) => Promise<unknown>;
  refuse: (status: number, message: string) => Error;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/**
 * GET /evidence/day?date=D and /evidence/month?month=YYYY-MM: the evidence pack of an approved date,
 * or of a month's approved dates (the others left out and named in X-Dates-Left-Out), as
 * `wallet-recon signoff export` writes it. For approvers, admins and auditors; a download changes
 * nothing, and is audited.
 */
export function registerEvidenceRoutes(app: FastifyInstance, deps: EvidenceRouteDeps): void {
  const { ctx } = deps;
  const download = async (request: FastifyRequest, target: { date?: string; month?: string }) => {
    const user = request.session!.user;
    const what = target.date ?? target.month!;
    if (!mayExportEvidence(user.role)) {
      await deps.audit(request, 'evidence.download', 'refused', what, { reason: `${user.role} role` });
      throw deps.refuse(403, `Refused: "${user.name}" has the ${user.role} role; evidence packs are for approvers, admins and auditors.`);
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-evidence-'));
    const file = path.join(dir, `evidence-${what}.zip`);
    try {
      // The pack's writers (zip, PDF) are loaded when a pack is asked for, not with the console.
      const { exportEvidencePack, PackRefusedError } = await import('../evidence/export-pack.js');
      let outcome;
      try {
        outcome = await exportEvidencePack(ctx, { ...target, partial: target.month !== undefined, out: file });
      } catch (error) {
        if (!(error instanceof PackRefusedError)) throw error;
        await deps.audit(request, 'evidence.download', 'refused', what, { reason: error.message });
        throw deps.refuse(409, `Refused: ${error.message}`);
      }
      await deps.audit(request, 'evidence.download', 'ok', what, { dates: outcome.dates, signed: outcome.signed });
      return { dir, file, name: path.basename(file), leftOut: outcome.leftOut.map((s) => `${s.date} ${s.state}`).join(', ') };
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  };

  app.get<{ Querystring: { date?: string } }>('/evidence/day', async (request, reply) => {
    const date = request.query.date ?? '';
    if (!DATE.test(date)) throw new UsageError(`date ${JSON.stringify(date)} is not a date: use YYYY-MM-DD.`);
    const pack = await download(request, { date });
    const stream = createReadStream(pack.file).on('close', () => rmSync(pack.dir, { recursive: true, force: true }));
    return reply.header('Content-Disposition', `attachment; filename="${pack.name}"`).type('application/zip').send(stream);
  });

  app.get<{ Querystring: { month?: string } }>('/evidence/month', async (request, reply) => {
    const month = request.query.month ?? '';
    if (!MONTH.test(month)) throw new UsageError(`month ${JSON.stringify(month)} is not a month: use YYYY-MM.`);
    const pack = await download(request, { month });
    const stream = createReadStream(pack.file).on('close', () => rmSync(pack.dir, { recursive: true, force: true }));
    if (pack.leftOut !== '') reply.header('X-Dates-Left-Out', pack.leftOut);
    return reply.header('Content-Disposition', `attachment; filename="${pack.name}"`).type('application/zip').send(stream);
  });
}
