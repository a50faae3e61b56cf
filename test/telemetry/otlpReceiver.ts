import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local OTLP/HTTP receiver speaking the JSON encoding (what @opentelemetry/exporter-*-otlp-http
// send): it takes POST /v1/traces and /v1/metrics, answers 200 `{}` as a collector does, and keeps
// what it received, flattened.

/** An OTLP attribute value in JSON. */
interface AnyValue {
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly intValue?: number | string;
  readonly doubleValue?: number;
  readonly arrayValue?: { readonly values?: readonly AnyValue[] };
}
interface KeyValue {
  readonly key: string;
  readonly value: AnyValue;
}

/** One span as received, with its resource's service name. */
export interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** 1 internal, 2 server, 3 client (OTLP's SpanKind). */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly status: number;
}

/** One metric data point as received. */
export interface ReceivedPoint {
  readonly service: string;
  readonly metric: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** A sum's or gauge's value, or a histogram's count. */
  readonly value: number;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** What to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly points: ReceivedPoint[];
  /** Bodies it could not read as OTLP JSON (none, when the exporters speak it). */
  readonly refused: string[];
  close(): Promise<void>;
}

function valueOf(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: readonly KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

type Resource = { resource?: { attributes?: KeyValue[] } };
const serviceOf = (entry: Resource) => String(attributesOf(entry.resource?.attributes)['service.name'] ?? '');

function readTraces(body: { resourceSpans?: (Resource & { scopeSpans?: { spans?: Record<string, unknown>[] }[] })[] }): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((entry) =>
    (entry.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service: serviceOf(entry),
        traceId: String(span['traceId']),
        spanId: String(span['spanId']),
        parentSpanId: String(span['parentSpanId'] ?? ''),
        name: String(span['name']),
        kind: Number(span['kind']),
        attributes: attributesOf(span['attributes'] as KeyValue[] | undefined),
        status: Number((span['status'] as { code?: number } | undefined)?.code ?? 0),
      })),
    ),
  );
}

type DataPoint = { attributes?: KeyValue[]; asInt?: number | string; asDouble?: number; count?: number | string };
type Metric = { name: string; sum?: { dataPoints?: DataPoint[] }; gauge?: { dataPoints?: DataPoint[] }; histogram?: { dataPoints?: DataPoint[] } };

function readMetrics(body: { resourceMetrics?: (Resource & { scopeMetrics?: { metrics?: Metric[] }[] })[] }): ReceivedPoint[] {
  return (body.resourceMetrics ?? []).flatMap((entry) =>
    (entry.scopeMetrics ?? []).flatMap((scope) =>
      (scope.metrics ?? []).flatMap((metric) =>
        (metric.sum?.dataPoints ?? metric.gauge?.dataPoints ?? metric.histogram?.dataPoints ?? []).map((point) => ({
          service: serviceOf(entry),
          metric: metric.name,
          attributes: attributesOf(point.attributes),
          value: Number(point.asInt ?? point.asDouble ?? point.count ?? Number.NaN),
        })),
      ),
    ),
  );
}

/** Starts a receiver on a free local port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/json')) throw new Error('not an OTLP JSON export');
        const body = JSON.parse(text) as Record<string, never>;
        if (req.url === '/v1/traces') spans.push(...readTraces(body));
        else if (req.url === '/v1/metrics') points.push(...readMetrics(body));
        else throw new Error(`unknown path ${req.url}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        refused.push(`${req.method} ${req.url}: ${(error as Error).message}`);
        res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    points,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
