import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Service {
  image?: string;
  secrets?: string[];
  build?: unknown;
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[]; interval?: string };
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  entrypoint?: string[];
  command?: string[];
}

const root = path.join(import.meta.dirname, '..', '..');
const composeText = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText) as { services: Record<string, Service>; volumes: Record<string, unknown>; secrets: Record<string, { file?: string }> };

describe('docker-compose.yml', () => {
  it('runs the official PostgreSQL image with a volume and a healthcheck', () => {
    const pg = compose.services.postgres!;
    expect(pg.image).toMatch(/^postgres:\d+/);
    expect(pg.volumes?.some((v) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    expect(Object.keys(compose.volumes)).toContain(pg.volumes![0]!.split(':')[0]);
    expect(pg.healthcheck?.test.join(' ')).toContain('pg_isready');
  });

  it('migrates once after PostgreSQL is healthy, then starts two workers against the one database', () => {
    const migrate = compose.services.migrate!;
    expect(migrate.build).toBeDefined();
    expect(migrate.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(migrate.command).toEqual(['migrate']);
    const workers = Object.keys(compose.services).filter((name) => compose.services[name]!.command?.[0] === 'schedule');
    expect(workers).toEqual(['worker-1', 'worker-2']);
    for (const name of workers) {
      const worker = compose.services[name]!;
      expect(worker.build).toBeDefined();
      // Only after the schemas (the job queue's too) exist: workers never race to create them.
      expect(worker.depends_on?.migrate?.condition).toBe('service_completed_successfully');
      expect(worker.environment!.DATABASE_URL).toBe(migrate.environment!.DATABASE_URL);
    }
    // Each on its own host port: two workers on one host must not want the same one.
    expect(workers.map((name) => compose.services[name]!.ports)).toEqual([['127.0.0.1:9464:9464'], ['127.0.0.1:9465:9464']]);
  });

  it('gives the gateway secret and the database password as Docker secrets, never as environment values', () => {
    const worker = compose.services['worker-2']!;
    const postgres = compose.services.postgres!;
    expect(compose.secrets.gateway_api_secret?.file).toBe('./secrets/gateway_api_secret');
    expect(compose.secrets.postgres_password?.file).toBe('./secrets/postgres_password');
    expect(worker.secrets).toEqual(expect.arrayContaining(['gateway_api_secret', 'postgres_password']));
    expect(postgres.secrets).toEqual(['postgres_password']);
    expect(worker.environment!.GATEWAY_API_SECRET_FILE).toBe('/run/secrets/gateway_api_secret');
    expect(worker.environment!.DATABASE_PASSWORD_FILE).toBe('/run/secrets/postgres_password');
    expect(postgres.environment!.POSTGRES_PASSWORD_FILE).toBe('/run/secrets/postgres_password');
    // The connection string names the user but carries no password.
    expect(new URL(worker.environment!.DATABASE_URL!).password).toBe('');
    for (const env of [worker.environment!, postgres.environment!]) {
      expect(env).not.toHaveProperty('GATEWAY_API_SECRET');
      expect(env).not.toHaveProperty('POSTGRES_PASSWORD');
    }
    expect(composeText).not.toMatch(/\$\{(GATEWAY_API_SECRET|POSTGRES_PASSWORD)\b/);
    expect(readFileSync(path.join(root, '.gitignore'), 'utf8').split('\n')).toContain('secrets/');
  });

  it('takes the non-secret settings from the environment', () => {
    const env = compose.services['worker-1']!.environment!;
    expect(env.GATEWAY_API_KEY).toMatch(/^\$\{GATEWAY_API_KEY[:?}]/);
    for (const variable of ['GATEWAY_ENV', 'RECON_TIMEZONE', 'RECON_SCHEDULE', 'GATEWAY_MAX_RPS']) expect(env).toHaveProperty(variable);
  });

  it('checks the worker\'s health on /healthz and publishes its metrics port on loopback only', () => {
    for (const name of ['worker-1', 'worker-2']) {
      const worker = compose.services[name]!;
      expect(worker.healthcheck?.test.join(' ')).toMatch(/^CMD node -e .*http:\/\/127\.0\.0\.1:9464\/healthz/);
      expect(worker.ports?.every((p) => p.startsWith('127.0.0.1:'))).toBe(true);
    }
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ENV RECON_METRICS_PORT=9464 RECON_METRICS_HOST=0\.0\.0\.0$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \["node", "-e", ".*\/healthz/m);
  });

  it('has a Dockerfile on the current Node LTS whose default command is the scheduler', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    // Both stages: the build and the image that runs.
    expect(dockerfile.match(/^FROM node:24-bookworm-slim/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/CMD \["schedule"\]/);
    expect(dockerfile).toMatch(/USER node/);
  });

  it('gives the image build what the bundle is made from', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    for (const needed of ['package.json', 'package-lock.json', 'scripts/build.mjs', 'bin', 'src', 'migrations', 'jobs']) expect(copied).toContain(needed);
  });
});
