import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Service {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[]; interval?: string };
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  entrypoint?: string[];
}

const root = path.join(import.meta.dirname, '..', '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service>; volumes: Record<string, unknown> };

describe('docker-compose.yml', () => {
  it('runs the official PostgreSQL image with a volume and a healthcheck', () => {
    const pg = compose.services.postgres!;
    expect(pg.image).toMatch(/^postgres:\d+/);
    expect(pg.volumes?.some((v) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    expect(Object.keys(compose.volumes)).toContain(pg.volumes![0]!.split(':')[0]);
    expect(pg.healthcheck?.test.join(' ')).toContain('pg_isready');
  });

  it('starts the worker after PostgreSQL is healthy, migrating then scheduling', () => {
    const worker = compose.services.worker!;
    expect(worker.build).toBeDefined();
    expect(worker.depends_on?.postgres?.condition).toBe('service_healthy');
    const command = worker.entrypoint!.join(' ');
    expect(command.indexOf('migrate')).toBeGreaterThan(-1);
    expect(command.indexOf('schedule')).toBeGreaterThan(command.indexOf('migrate'));
  });

  it('passes secrets from the environment and never writes them', () => {
    const env = compose.services.worker!.environment!;
    expect(env.GATEWAY_API_SECRET).toMatch(/^\$\{GATEWAY_API_SECRET[:?}]/);
    expect(env.GATEWAY_API_KEY).toMatch(/^\$\{GATEWAY_API_KEY[:?}]/);
    expect(env.DATABASE_URL).toContain('${POSTGRES_PASSWORD');
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD/);
    for (const variable of ['GATEWAY_ENV', 'RECON_TIMEZONE', 'RECON_SCHEDULE']) expect(env).toHaveProperty(variable);
  });

  it('checks the worker\'s health on /healthz and publishes its metrics port on loopback only', () => {
    const worker = compose.services.worker!;
    expect(worker.healthcheck?.test.join(' ')).toMatch(/^CMD node -e .*http:\/\/127\.0\.0\.1:9464\/healthz/);
    expect(worker.ports).toEqual(['127.0.0.1:9464:9464']);
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ENV RECON_METRICS_PORT=9464 RECON_METRICS_HOST=0\.0\.0\.0$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \["node", "-e", ".*\/healthz/m);
  });

  it('has a Dockerfile whose default command is the scheduler', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20/m);
    expect(dockerfile).toMatch(/CMD \["schedule"\]/);
    expect(dockerfile).toMatch(/USER node/);
  });
});
