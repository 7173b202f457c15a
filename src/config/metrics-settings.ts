import * as z from 'zod';
import { Secret } from '../secret.js';
import type { MetricsSettings } from './config-types.js';
import { trueOrFalse } from './schema-helpers.js';

/** The metrics endpoint's and Pushgateway's variables, part of the one environment schema. */
export const metricsVariables = {
  RECON_METRICS_PORT: z
    .string()
    .optional()
    .refine((v) => v === undefined || (/^\d{1,5}$/.test(v) && Number(v) >= 1 && Number(v) <= 65535), 'must be a port number from 1 to 65535')
    .transform((v) => (v === undefined ? undefined : Number(v))),
  RECON_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  RECON_METRICS_PER_ACCOUNT: trueOrFalse('true'),
  RECON_PUSHGATEWAY_URL: z.string().optional(),
};

type MetricsValues = z.output<z.ZodObject<typeof metricsVariables>>;

/** The metrics settings from validated values (the Pushgateway URL is checked with the notification endpoints). */
export function metricsSettingsOf(v: MetricsValues): MetricsSettings {
  return {
    port: v.RECON_METRICS_PORT,
    host: v.RECON_METRICS_HOST,
    perAccount: v.RECON_METRICS_PER_ACCOUNT,
    pushgatewayUrl: v.RECON_PUSHGATEWAY_URL === undefined ? undefined : new Secret(v.RECON_PUSHGATEWAY_URL),
  };
}
