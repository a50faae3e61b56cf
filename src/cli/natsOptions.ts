import { readFile } from 'node:fs/promises';
import type { NatsConnection } from '../nats/index.js';
import type { ParseArgsConfig } from 'node:util';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { DEFAULT_SUBJECT_PREFIX, SUBJECT_PREFIX_HINT, isSubjectPrefix } from '../actors/subjects.js';

/** The command-line options every distributed command takes (each also read from the environment). */
export const natsOptionSpecs: NonNullable<ParseArgsConfig['options']> = {
  nats: { type: 'string' },
  prefix: { type: 'string' },
  'nats-user': { type: 'string' },
  'nats-password': { type: 'string' },
  'nats-token': { type: 'string' },
  'nats-nkey': { type: 'string' },
  'nats-creds': { type: 'string' },
  'nats-inbox-prefix': { type: 'string' },
  replicas: { type: 'string' },
  'placement-tags': { type: 'string' },
};

/** The help text of {@link natsOptionSpecs}. */
export const natsOptionsHelp = `NATS (flags, or the environment variables in brackets):
  --nats <url>            the server(s), comma-separated [NATS_URL]
  --prefix <prefix>       subject prefix, to keep tenants apart: lowercase letters, digits, - and . (default redflow) [REDFLOW_PREFIX]
  --nats-user <user>      with --nats-password [NATS_USER, NATS_PASSWORD]
  --nats-token <token>    [NATS_TOKEN]
  --nats-nkey <file>      a file holding an nkey seed [NATS_NKEY]
  --nats-creds <file>     a .creds file [NATS_CREDS]
  --nats-inbox-prefix <p> reply subjects prefix, e.g. _INBOX_core (see deploy/nats/redflow.conf) [NATS_INBOX_PREFIX]
  --replicas <n>          copies of the trace stream and of every KV bucket (runs, leases, tool
                          results, memory) when they are created: 1 (default), 3 or 5, at most the
                          servers of the cluster; a list of servers in --nats fails over between them [REDFLOW_REPLICAS]
  --placement-tags <t,u>  keep them only on servers with these server_tags [REDFLOW_PLACEMENT_TAGS]`;

/** The NATS URL given by flag or environment, if any: distributed mode when set. */
export function natsUrl(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = (values.nats as string | undefined) ?? env.NATS_URL;
  return url === undefined || url.trim() === '' ? undefined : url;
}

/** The subject prefix given by flag or environment. */
export function subjectPrefix(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): string {
  const prefix = (values.prefix as string | undefined) ?? env.REDFLOW_PREFIX ?? DEFAULT_SUBJECT_PREFIX;
  if (!isSubjectPrefix(prefix)) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `"${prefix}" is not a valid subject prefix`, { hint: SUBJECT_PREFIX_HINT }));
  }
  return prefix;
}

/**
 * Connects with the options given by flags or environment. The NATS client is only loaded here,
 * so embedded commands never load it.
 */
export async function connectFromOptions(
  values: Record<string, string | boolean | undefined>,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<NatsConnection> {
  const url = natsUrl(values, env);
  if (!url) throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, 'which NATS server? give --nats <url> or set NATS_URL'));
  const { connectNats } = await import('../nats/connect.js');
  const user = (values['nats-user'] as string | undefined) ?? env.NATS_USER;
  const pass = (values['nats-password'] as string | undefined) ?? env.NATS_PASSWORD;
  const token = (values['nats-token'] as string | undefined) ?? env.NATS_TOKEN;
  const nkeyFile = (values['nats-nkey'] as string | undefined) ?? env.NATS_NKEY;
  const credsFile = (values['nats-creds'] as string | undefined) ?? env.NATS_CREDS;
  const inboxPrefix = (values['nats-inbox-prefix'] as string | undefined) ?? env.NATS_INBOX_PREFIX;
  let nkeySeed: string | undefined;
  if (nkeyFile) {
    try {
      nkeySeed = (await readFile(nkeyFile, 'utf8')).trim();
    } catch (error) {
      throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `cannot read the nkey seed file ${nkeyFile}: ${(error as NodeJS.ErrnoException).code ?? ''}`));
    }
  }
  return connectNats({
    servers: url.split(',').map((server) => server.trim()),
    name,
    ...(user !== undefined && { user }),
    ...(pass !== undefined && { pass }),
    ...(token !== undefined && { token }),
    ...(nkeySeed !== undefined && { nkeySeed }),
    ...(credsFile !== undefined && { credsFile }),
    ...(inboxPrefix !== undefined && { inboxPrefix }),
  });
}

/**
 * The replicas and placement tags given by flag or environment (`--replicas` / `REDFLOW_REPLICAS`,
 * `--placement-tags` / `REDFLOW_PLACEMENT_TAGS`), or undefined when neither is: each stream and
 * bucket is then made with one copy. The cluster checks the count against its servers when it
 * creates them (`JETSTREAM_REPLICAS_UNAVAILABLE`).
 *
 * @example
 * ```ts
 * replicationOptions({ replicas: '3' }); // { replicas: 3 }
 * ```
 */
export function replicationOptions(
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): { replicas?: number; placementTags?: string[] } | undefined {
  const replicasText = (values.replicas as string | undefined) ?? env.REDFLOW_REPLICAS;
  const tagsText = (values['placement-tags'] as string | undefined) ?? env.REDFLOW_PLACEMENT_TAGS;
  if (replicasText === undefined && tagsText === undefined) return undefined;
  const replicas = replicasText === undefined ? undefined : Number(replicasText);
  if (replicas !== undefined && (!/^\d+$/.test(replicasText ?? '') || replicas < 1 || replicas > 5)) {
    throw new RedflowError(
      errorInfo(ErrorCode.CLI_USAGE, `--replicas (REDFLOW_REPLICAS) must be a whole number from 1 to 5, not "${String(replicasText)}"`, {
        hint: 'give 3 on a cluster of three servers (5 on five), 1 on a single server',
      }),
    );
  }
  const placementTags = tagsText?.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');
  return { ...(replicas !== undefined && { replicas }), ...(placementTags !== undefined && placementTags.length > 0 && { placementTags }) };
}
