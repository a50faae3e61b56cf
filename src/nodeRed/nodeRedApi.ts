/**
 * The parts of Node-RED's runtime API the Redflow nodes use, typed here rather than through a
 * types package: Node-RED ships none, and these few members have been stable since Node-RED 1.0.
 */

/** A Node-RED message: `_msgid` and whatever the flow puts on it. */
export interface NodeRedMessage {
  _msgid?: string;
  payload?: unknown;
  topic?: string;
  [key: string]: unknown;
}

/** What a node's status shows under it in the editor. */
export interface NodeStatus {
  readonly fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  readonly shape?: 'ring' | 'dot';
  readonly text?: string;
}

/** Sends messages on a node's outputs: one message, or one (or `null`) per output. */
export type SendFunction = (msg: NodeRedMessage | readonly (NodeRedMessage | null)[]) => void;

/** Tells Node-RED a message is handled; an error goes to Catch nodes. */
export type DoneFunction = (error?: Error | string) => void;

/** A node as the runtime has it (`this` in a node's constructor). */
export interface NodeRedNode {
  readonly id: string;
  readonly type: string;
  readonly z?: string;
  readonly name?: string;
  readonly credentials?: Readonly<Record<string, string | undefined>>;
  readonly _flow?: { readonly path?: string };
  readonly _alias?: string;
  on(event: 'input', handler: (msg: NodeRedMessage, send: SendFunction, done: DoneFunction) => void): void;
  on(event: 'close', handler: (removed: boolean, done: () => void) => void): void;
  send(msg: NodeRedMessage | readonly (NodeRedMessage | null)[]): void;
  receive(msg: NodeRedMessage): void;
  status(status: NodeStatus | Record<string, never>): void;
  log(message: unknown): void;
  warn(message: unknown): void;
  error(message: unknown, msg?: NodeRedMessage): void;
}

/** A node's configuration as the flows hold it: its properties, and `wires` for nodes with outputs. */
export interface NodeRedNodeConfig {
  readonly id: string;
  readonly type: string;
  readonly z?: string;
  readonly name?: string;
  readonly wires?: readonly (readonly string[])[];
  readonly [property: string]: unknown;
}

/** A credential field of a node type: `password` fields never come back to the editor. */
export interface CredentialField {
  readonly type: 'text' | 'password';
}

/** Express's handler shape, for the few admin routes the nodes add. */
export type AdminHandler = (
  req: { params: Record<string, string>; body?: unknown; query?: Record<string, unknown> },
  res: { json(body: unknown): void; status(code: number): { json(body: unknown): void } },
  next?: () => void,
) => void;

/** The `RED` object a node module's function gets. */
export interface NodeRedApi {
  readonly nodes: {
    registerType(
      type: string,
      constructor: (this: NodeRedNode, config: NodeRedNodeConfig) => void,
      options?: { readonly credentials?: Readonly<Record<string, CredentialField>> },
    ): void;
    createNode(node: NodeRedNode, config: NodeRedNodeConfig): void;
    getNode(id: string): NodeRedNode | null;
    /** Calls `callback` with the configuration of every node of the deployed flows. */
    eachNode(callback: (config: NodeRedNodeConfig) => void): void;
    getCredentials(id: string): Readonly<Record<string, string | undefined>> | undefined;
  };
  readonly settings: { readonly userDir?: string; readonly [key: string]: unknown };
  readonly util: {
    generateId(): string;
    encodeObject(message: Record<string, unknown>, options?: { maxLength?: number }): Record<string, unknown>;
  };
  readonly comms?: { publish(topic: string, data: unknown, retain?: boolean): void };
  /** The runtime's events: `flows:started` after every deploy. */
  readonly events?: {
    on(event: string, listener: () => void): void;
    removeListener(event: string, listener: () => void): void;
  };
  readonly httpAdmin?: {
    get(path: string, ...handlers: AdminHandler[]): void;
    post(path: string, ...handlers: AdminHandler[]): void;
  };
  readonly auth?: { needsPermission(permission: string): AdminHandler };
  readonly log?: { warn(message: unknown): void; info(message: unknown): void };
}
