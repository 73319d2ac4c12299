import type {
  BatchCreateItem,
  BatchRemoveOptions,
  ChangeQuery,
  CreateExtras,
  EventStore,
  IdempotencyRecord,
  IdempotencyStore,
  ImportItem,
  ListQuery,
  MaintenanceStore,
  PlantChange,
  PlantFilter,
  PlantStore,
  RetentionPolicy,
  Store,
  TokenListOptions,
  TokenRecord,
  TokenRoll,
  TokenStore,
  WebhookChanges,
  WebhookRecord,
  WebhookStore,
  WriteOptions,
} from './types.js'

/** Runs one store call of the operation it was made for, observed (timed, or traced). */
export type Observe = <T>(call: () => Promise<T>) => Promise<T>

/**
 * Makes the observer of one operation (`plants.create`). Called once per operation as the store is
 * built, so that what an operation needs (a bound metric series) is found once, not per call.
 */
export type Observer = (operation: string) => Observe

/** The parts of a store whose calls can be observed. */
export type ObservedPart = 'plants' | 'tokens' | 'events' | 'idempotency' | 'maintenance' | 'webhooks'

/**
 * The store with each asynchronous call of the parts named observed by `observer`; the other parts,
 * and the synchronous helpers (the revocation epoch, events.watch), are the store's own. Each call is
 * written out rather than intercepted: the request path calls a plain method, which the engine
 * inlines, not a trap looked up by name on every access.
 */
export function observeStore(store: Store, observer: Observer, parts: readonly ObservedPart[]): Store {
  const observed = new Set(parts)
  const plants = observed.has('plants') ? new ObservedPlants(store.plants, observer) : store.plants
  const tokens = observed.has('tokens') ? new ObservedTokens(store.tokens, observer) : store.tokens
  const events = observed.has('events') ? new ObservedEvents(store.events, observer) : store.events
  const idempotency = observed.has('idempotency')
    ? new ObservedIdempotency(store.idempotency, observer)
    : store.idempotency
  const maintenance = observed.has('maintenance')
    ? new ObservedMaintenance(store.maintenance, observer)
    : store.maintenance
  const webhooks = observed.has('webhooks') ? new ObservedWebhooks(store.webhooks, observer) : store.webhooks
  return {
    kind: store.kind,
    migrated: store.migrated,
    plants,
    tokens,
    events,
    maintenance,
    webhooks,
    idempotency,
    leases: store.leases,
    streamTickets: store.streamTickets,
    rateLimits: store.rateLimits,
    backup: (file) => store.backup(file),
    ping: () => store.ping(),
    close: () => store.close(),
  }
}

class ObservedPlants implements PlantStore {
  private readonly observeCreate: Observe
  private readonly observeGet: Observe
  private readonly observeImportBatch: Observe
  private readonly observeCreateMany: Observe
  private readonly observeRemoveMany: Observe
  private readonly observeRead: Observe
  private readonly observeList: Observe
  private readonly observeCount: Observe
  private readonly observeUpdate: Observe
  private readonly observeRemove: Observe

  constructor(
    private readonly inner: PlantStore,
    observer: Observer,
  ) {
    this.observeCreate = observer('plants.create')
    this.observeGet = observer('plants.get')
    this.observeImportBatch = observer('plants.importBatch')
    this.observeCreateMany = observer('plants.createMany')
    this.observeRemoveMany = observer('plants.removeMany')
    this.observeRead = observer('plants.read')
    this.observeList = observer('plants.list')
    this.observeCount = observer('plants.count')
    this.observeUpdate = observer('plants.update')
    this.observeRemove = observer('plants.remove')
  }

  create(plant: Parameters<PlantStore['create']>[0], extras?: CreateExtras) {
    return this.observeCreate(() => this.inner.create(plant, extras))
  }
  get(id: bigint) {
    return this.observeGet(() => this.inner.get(id))
  }
  importBatch(items: readonly ImportItem[]) {
    return this.observeImportBatch(() => this.inner.importBatch(items))
  }
  createMany(items: readonly BatchCreateItem[], idempotency?: IdempotencyRecord) {
    return this.observeCreateMany(() => this.inner.createMany(items, idempotency))
  }
  removeMany(ids: readonly bigint[], options: BatchRemoveOptions) {
    return this.observeRemoveMany(() => this.inner.removeMany(ids, options))
  }
  read(id: bigint) {
    return this.observeRead(() => this.inner.read(id))
  }
  list(query: ListQuery) {
    return this.observeList(() => this.inner.list(query))
  }
  count(filter: PlantFilter) {
    return this.observeCount(() => this.inner.count(filter))
  }
  update(id: bigint, change: PlantChange, options?: WriteOptions) {
    return this.observeUpdate(() => this.inner.update(id, change, options))
  }
  remove(id: bigint, options?: WriteOptions) {
    return this.observeRemove(() => this.inner.remove(id, options))
  }
}

class ObservedTokens implements TokenStore {
  private readonly observeInsert: Observe
  private readonly observeFind: Observe
  private readonly observeList: Observe
  private readonly observeRoll: Observe
  private readonly observeRevoke: Observe
  private readonly observeInsertFirst: Observe
  private readonly observeTouchLastUsed: Observe

  constructor(
    private readonly inner: TokenStore,
    observer: Observer,
  ) {
    this.observeInsert = observer('tokens.insert')
    this.observeFind = observer('tokens.find')
    this.observeList = observer('tokens.list')
    this.observeRoll = observer('tokens.roll')
    this.observeRevoke = observer('tokens.revoke')
    this.observeInsertFirst = observer('tokens.insertFirst')
    this.observeTouchLastUsed = observer('tokens.touchLastUsed')
  }

  insert(token: TokenRecord) {
    return this.observeInsert(() => this.inner.insert(token))
  }
  find(id: string) {
    return this.observeFind(() => this.inner.find(id))
  }
  list(page?: TokenListOptions) {
    return this.observeList(() => this.inner.list(page))
  }
  roll(id: string, roll: TokenRoll, at: Date) {
    return this.observeRoll(() => this.inner.roll(id, roll, at))
  }
  revoke(id: string, at: Date) {
    return this.observeRevoke(() => this.inner.revoke(id, at))
  }
  insertFirst(token: TokenRecord, deliver: () => void) {
    return this.observeInsertFirst(() => this.inner.insertFirst(token, deliver))
  }
  touchLastUsed(id: string, at: Date) {
    return this.observeTouchLastUsed(() => this.inner.touchLastUsed(id, at))
  }
  /** Synchronous and asked on every request: no store work worth a series or a span. */
  revocationEpoch(): number {
    return this.inner.revocationEpoch()
  }
}

class ObservedEvents implements EventStore {
  private readonly observeListSince: Observe
  private readonly observeChanges: Observe
  private readonly observeHistory: Observe
  private readonly observeRetentionHorizon: Observe
  readonly watch?: EventStore['watch']

  constructor(
    private readonly inner: EventStore,
    observer: Observer,
  ) {
    this.observeListSince = observer('events.listSince')
    this.observeChanges = observer('events.changes')
    this.observeHistory = observer('events.history')
    this.observeRetentionHorizon = observer('events.retentionHorizon')
    // Optional in the interface: present here exactly when the store has it.
    if (inner.watch) this.watch = inner.watch.bind(inner)
  }

  listSince(afterSeq: number, limit: number) {
    return this.observeListSince(() => this.inner.listSince(afterSeq, limit))
  }
  changes(query: ChangeQuery) {
    return this.observeChanges(() => this.inner.changes(query))
  }
  history(plantId: bigint, limit: number, beforeSeq?: number) {
    return this.observeHistory(() => this.inner.history(plantId, limit, beforeSeq))
  }
  retentionHorizon() {
    return this.observeRetentionHorizon(() => this.inner.retentionHorizon())
  }
  /** A wake-up registration, not store work: no series or span. */
  watchChanges(listener: () => void) {
    return this.inner.watchChanges(listener)
  }
}

class ObservedIdempotency implements IdempotencyStore {
  private readonly observeFind: Observe
  private readonly observePurgeExpired: Observe

  constructor(
    private readonly inner: IdempotencyStore,
    observer: Observer,
  ) {
    this.observeFind = observer('idempotency.find')
    this.observePurgeExpired = observer('idempotency.purgeExpired')
  }

  find(tokenId: string, key: string, now: Date) {
    return this.observeFind(() => this.inner.find(tokenId, key, now))
  }
  purgeExpired(now: Date, signal?: AbortSignal) {
    return this.observePurgeExpired(() => this.inner.purgeExpired(now, signal))
  }
}

class ObservedMaintenance implements MaintenanceStore {
  private readonly observeSweep: Observe
  private readonly observeCheckpoint: Observe

  constructor(
    private readonly inner: MaintenanceStore,
    observer: Observer,
  ) {
    this.observeSweep = observer('maintenance.sweep')
    this.observeCheckpoint = observer('maintenance.checkpoint')
  }

  sweep(policy: RetentionPolicy) {
    return this.observeSweep(() => this.inner.sweep(policy))
  }
  checkpoint() {
    return this.observeCheckpoint(() => this.inner.checkpoint())
  }
}

type Args<K extends keyof WebhookStore> = Parameters<WebhookStore[K]>

class ObservedWebhooks implements WebhookStore {
  private readonly observe: Record<keyof WebhookStore, Observe>

  constructor(
    private readonly inner: WebhookStore,
    observer: Observer,
  ) {
    const names: Array<keyof WebhookStore> = [
      'insert',
      'find',
      'list',
      'update',
      'rotateSecret',
      'delete',
      'listDeliveries',
      'listAttempts',
      'requeueDelivery',
      'replay',
      'recover',
      'enqueueTest',
      'fanOut',
      'claim',
      'complete',
      'release',
      'queueStats',
      'hasWork',
    ]
    this.observe = Object.fromEntries(names.map((name) => [name, observer(`webhooks.${name}`)])) as Record<
      keyof WebhookStore,
      Observe
    >
  }

  insert(webhook: WebhookRecord) {
    return this.observe.insert(() => this.inner.insert(webhook))
  }
  find(id: string) {
    return this.observe.find(() => this.inner.find(id))
  }
  list() {
    return this.observe.list(() => this.inner.list())
  }
  update(id: string, changes: WebhookChanges) {
    return this.observe.update(() => this.inner.update(id, changes))
  }
  rotateSecret(...args: Args<'rotateSecret'>) {
    return this.observe.rotateSecret(() => this.inner.rotateSecret(...args))
  }
  delete(id: string) {
    return this.observe.delete(() => this.inner.delete(id))
  }
  listDeliveries(...args: Args<'listDeliveries'>) {
    return this.observe.listDeliveries(() => this.inner.listDeliveries(...args))
  }
  listAttempts(...args: Args<'listAttempts'>) {
    return this.observe.listAttempts(() => this.inner.listAttempts(...args))
  }
  requeueDelivery(...args: Args<'requeueDelivery'>) {
    return this.observe.requeueDelivery(() => this.inner.requeueDelivery(...args))
  }
  replay(...args: Args<'replay'>) {
    return this.observe.replay(() => this.inner.replay(...args))
  }
  recover(...args: Args<'recover'>) {
    return this.observe.recover(() => this.inner.recover(...args))
  }
  enqueueTest(...args: Args<'enqueueTest'>) {
    return this.observe.enqueueTest(() => this.inner.enqueueTest(...args))
  }
  fanOut(...args: Args<'fanOut'>) {
    return this.observe.fanOut(() => this.inner.fanOut(...args))
  }
  claim(...args: Args<'claim'>) {
    return this.observe.claim(() => this.inner.claim(...args))
  }
  complete(...args: Args<'complete'>) {
    return this.observe.complete(() => this.inner.complete(...args))
  }
  release(...args: Args<'release'>) {
    return this.observe.release(() => this.inner.release(...args))
  }
  queueStats() {
    return this.observe.queueStats(() => this.inner.queueStats())
  }
  hasWork() {
    return this.observe.hasWork(() => this.inner.hasWork())
  }
}
