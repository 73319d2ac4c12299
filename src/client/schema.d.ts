// Generated from the OpenAPI document by `npm run client:generate`: do not edit.
// int64 values are typed bigint: the client parses them exactly (see ./json.ts).

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process is up */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: the database answers and the instance is not draining */
        get: operations["ready"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Lists plants, searched by name, filtered by tags and sorted, one page at a time
         * @description Every parameter combines with the others. The body is a plain array. When another page may follow, a `Link: <…>; rel="next"` header gives its address, with a `cursor`; the last page has none. Paging is by keyset in every order: a plant created, changed or deleted meanwhile never makes another appear twice or go missing.
         */
        get: operations["listPlants"];
        put?: never;
        /** Creates a new plant in the store */
        post: operations["createPlant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Reads one plant */
        get: operations["getPlant"];
        /** Replaces the name and tag of a plant */
        put: operations["replacePlant"];
        post?: never;
        /** Deletes a plant */
        delete: operations["deletePlant"];
        options?: never;
        head?: never;
        /** Changes the fields a JSON merge patch names */
        patch: operations["updatePlant"];
        trace?: never;
    };
    "/plants/{id}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Lists a plant's changes, newest first, one page at a time
         * @description Every create, update and delete of the plant that retention keeps (`--events-retention`), with who made it and the plant before and after. Readable after the plant is deleted. An id with no change kept (never used, or its changes all swept) has an empty history: 200 with `data: []`, not 404. When another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.
         */
        get: operations["getPlantHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Creates many plants at once, all or none
         * @description Up to 1000 items, all or nothing, in one transaction. The body may be up to 1311013 bytes whatever the service-wide body limit (`--body-limit`, when that is larger, applies instead): 1000 plants with the longest id, name and tag, in four-byte characters, with room for indentation. Each plant raises its own plant.created event. An invalid item is 400, an id repeated in the batch (40903) or already stored (40901) is 409; the message names the first offending item by its index, counted from 0.
         */
        post: operations["createPlants"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/batch-delete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deletes many plants at once, all or none
         * @description Up to 1000 items, all or nothing, in one transaction. The body may be up to 1311013 bytes whatever the service-wide body limit (`--body-limit`, when that is larger, applies instead): 1000 plants with the longest id, name and tag, in four-byte characters, with room for indentation. Each plant deleted raises its own plant.deleted event. An id no plant has is 404 naming it, unless `allowMissing` is true; an id repeated in the batch is 409 (40903).
         */
        post: operations["deletePlants"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Reads the changes to plants in commit order, after a cursor
         * @description The change feed: every create, update and delete, each once, in the order they committed. Read on with `after` set to the `next` of the previous page; a page with no changes yet still has `next` (poll, or follow GET /events/stream). A change appears within a second of the response that made it.
         */
        get: operations["listChanges"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics of this instance, every worker of it together (text exposition format) */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Lists subscriptions */
        get: operations["listWebhooks"];
        put?: never;
        /** Subscribes a URL to events; the answer carries the signing secret, shown only here */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Reads a subscription, including whether it is disabled and why */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Deletes a subscription and its deliveries */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /** Changes url, events, description, or disables / re-enables a subscription */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replaces the signing secret; the replaced one keeps signing too for 24 hours, until a later rotation replaces it */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queues a signed webhook.test message to this subscription only */
        post: operations["testWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Lists deliveries, newest first, with their latest attempt and next attempt, one page at a time
         * @description When another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries/{deliveryId}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sends a delivery again now, or once an attempt in flight ends, with a fresh retry schedule */
        post: operations["retryWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries/{deliveryId}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Lists a delivery's attempts, newest first, each with its time, duration, status or error and the start of the answer
         * @description Paged as the deliveries are: when another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.
         */
        get: operations["listWebhookDeliveryAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sends again every event of the subscribed types since a time (same webhook-id) */
        post: operations["replayWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sends again the deliveries that ended failed since a time (same webhook-id), with a fresh retry schedule */
        post: operations["recoverWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Lists tokens, oldest first, one page at a time (never a secret)
         * @description Revoked and expired tokens are listed too, until retention removes them. When another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.
         */
        get: operations["listTokens"];
        put?: never;
        /**
         * Issues a token; the answer carries its secret, shown only here
         * @description The calling token can grant only scopes it holds itself (40302 otherwise), and the token it makes expires no later than it and is allowed no more requests than it (40304 otherwise; `expiresIn` and `rateLimit` left out take the calling token's). The token records its maker in `createdBy`. Otherwise the same rules as `plantstore token create`.
         */
        post: operations["createToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Reads a token (never its secret) */
        get: operations["getToken"];
        put?: never;
        post?: never;
        /**
         * Revokes a token: every secret of it stops working, on every instance within 5 seconds
         * @description A token revoked before is left as it was and the answer is 204 again, as `plantstore token revoke` succeeds again: what was asked for holds. The token stays listed, with status `revoked`.
         */
        delete: operations["revokeToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{id}/roll": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Gives a token a new secret; the replaced one keeps working for the overlap (default 24h), then stops
         * @description A token has two secrets at most: a secret replaced by an earlier roll whose overlap is still running stops at once. The calling token must hold every scope of the rolled one (40303 otherwise), as the answer hands out its secret. A revoked or expired token cannot be rolled (40461), nor one that expires after the calling token or is allowed more requests than it (40304).
         */
        post: operations["rollToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller: who the request's token speaks for, and its scopes */
        get: operations["getCaller"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every change as it is committed, as Server-Sent Events
         * @description Each change is an event whose `id` is its cursor and whose `data` is the change. Without `Last-Event-ID` or `after` the stream starts with the next change. A `: heartbeat` comment comes every 15 s. A stream is ended when its client falls too far behind, its token is revoked or expires, or the instance drains: resume with `Last-Event-ID`. See docs/events.md.
         */
        get: operations["streamChanges"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/tickets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A short-lived ticket that opens change streams where no Authorization header can be sent
         * @description For a browser’s `EventSource`: `new EventSource("/events/stream?ticket=…")`. The ticket opens streams for a minute (no longer than the token lives), with the token’s scopes; the streams end when the token is revoked or expires.
         */
        post: operations["createStreamTicket"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "plant.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A plant was created
         * @description POSTed to every subscription of this type (a test message: to the subscription it was asked for), signed per Standard Webhooks (see docs/webhooks.md). Answer 2xx within the timeout; anything else is retried.
         */
        post: operations["plant_created_event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "plant.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A plant was replaced or changed
         * @description POSTed to every subscription of this type (a test message: to the subscription it was asked for), signed per Standard Webhooks (see docs/webhooks.md). Answer 2xx within the timeout; anything else is retried.
         */
        post: operations["plant_updated_event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "plant.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A plant was deleted (data: the plant as it was)
         * @description POSTed to every subscription of this type (a test message: to the subscription it was asked for), signed per Standard Webhooks (see docs/webhooks.md). Answer 2xx within the timeout; anything else is retried.
         */
        post: operations["plant_deleted_event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A test message, sent on request to one subscription
         * @description POSTed to every subscription of this type (a test message: to the subscription it was asked for), signed per Standard Webhooks (see docs/webhooks.md). Answer 2xx within the timeout; anything else is retried.
         */
        post: operations["webhook_test_event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * NewPlant
         * @description The request body for creation. Unknown fields are ignored.
         */
        NewPlant: {
            /**
             * Format: int64
             * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
             * @example 42
             */
            id: bigint;
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * Plant
         * @description The body of a full replacement (PUT). No tag means the plant has none. An id, when present, must equal the one in the path. Unknown fields are ignored.
         */
        Plant: {
            /**
             * Format: int64
             * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
             * @example 42
             */
            id?: bigint;
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * PlantPatch
         * @description A JSON merge patch (RFC 7386) of a plant: the fields it names are set, `tag: null` removes the tag, absent fields stay. An id, when present, must equal the one in the path. Unknown fields are ignored.
         */
        PlantPatch: {
            /**
             * Format: int64
             * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
             * @example 42
             */
            id?: bigint;
            /** @description The name of the plant */
            name?: string;
            tag?: string | null;
        };
        /**
         * StoredPlant
         * @description A plant as stored: its id, name and, when it has one, tag.
         */
        StoredPlant: {
            /**
             * Format: int64
             * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
             * @example 42
             */
            id: bigint;
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * NewPlants
         * @description The request body of a batch create. Unknown fields are ignored.
         */
        NewPlants: {
            /** @description 1 to 1000 plants, created all or none */
            plants: components["schemas"]["NewPlant"][];
        };
        /**
         * StoredPlants
         * @description The plants a batch created.
         */
        StoredPlants: {
            /** @description In the order sent */
            plants: components["schemas"]["StoredPlant"][];
        };
        /**
         * PlantDeletion
         * @description The request body of a batch delete. Unknown fields are ignored.
         */
        PlantDeletion: {
            /** @description 1 to 1000 plant ids, deleted all or none */
            ids: bigint[];
            /**
             * @description Pass over ids no plant has, instead of refusing the batch with 404
             * @default false
             */
            allowMissing: boolean;
        };
        /**
         * DeletedPlants
         * @description The plants a batch deleted.
         */
        DeletedPlants: {
            /** @description The ids deleted, in the order sent (without those passed over with allowMissing) */
            deleted: bigint[];
        };
        /**
         * Error
         * @description Every failure, with a stable code from the error catalog.
         */
        Error: {
            /**
             * Format: int32
             * @description Stable numeric error code
             * @enum {integer}
             */
            error: 40000 | 40001 | 40002 | 40003 | 40004 | 40005 | 40006 | 40007 | 40008 | 40009 | 40010 | 40011 | 40012 | 40013 | 40014 | 40050 | 40051 | 40052 | 40053 | 40054 | 40055 | 40056 | 40060 | 40061 | 40062 | 40063 | 40064 | 40070 | 40071 | 40072 | 40080 | 40101 | 40102 | 40103 | 40104 | 40105 | 40110 | 40111 | 40112 | 40113 | 40114 | 40115 | 40116 | 40117 | 40118 | 40120 | 40121 | 40301 | 40302 | 40303 | 40304 | 40401 | 40402 | 40450 | 40451 | 40460 | 40461 | 40501 | 40801 | 40901 | 40902 | 40903 | 41001 | 41201 | 41301 | 41401 | 41501 | 41601 | 41701 | 42201 | 42901 | 43101 | 50001 | 50301 | 50302;
            /** @description Text of the error */
            message: string;
        };
        /**
         * NewWebhook
         * @description A subscription to create. Unknown fields are ignored.
         */
        NewWebhook: {
            /** @description An absolute http or https URL, without credentials or fragment; by default not a loopback, private, link-local or metadata address. Parsed as the WHATWG URL Standard does, and stored and sent in the form it gives (an IDN host in punycode, a space or an é percent-encoded); at most 2000 characters both as given and as stored */
            url: string;
            /** @description Event types to receive; all of them when omitted on creation */
            events?: ("plant.created" | "plant.updated" | "plant.deleted")[];
            /** @description For people: at most 500 characters, without control characters or lone surrogates; null for none */
            description?: string | null;
        };
        /**
         * WebhookUpdate
         * @description Fields to change; at least one.
         */
        WebhookUpdate: {
            /** @description An absolute http or https URL, without credentials or fragment; by default not a loopback, private, link-local or metadata address. Parsed as the WHATWG URL Standard does, and stored and sent in the form it gives (an IDN host in punycode, a space or an é percent-encoded); at most 2000 characters both as given and as stored */
            url?: string;
            /** @description Event types to receive; all of them when omitted on creation */
            events?: ("plant.created" | "plant.updated" | "plant.deleted")[];
            /** @description For people: at most 500 characters, without control characters or lone surrogates; null for none */
            description?: string | null;
            /** @description false re-enables a disabled subscription */
            disabled?: boolean;
        };
        /**
         * Webhook
         * @description A subscription (no secret).
         */
        Webhook: {
            /** @description Subscription id */
            id: string;
            url: string;
            events: string[];
            /** @description For people: at most 500 characters, without control characters or lone surrogates; null for none */
            description: string | null;
            disabled: boolean;
            /** @description `failing`: disabled automatically after failing for the configured time */
            disabledReason: "manual" | "failing" | null;
            disabledAt: string | null;
            /** @description Start of the current run of failed attempts */
            failingSince: string | null;
            /** @description Until then, the secret replaced by the last rotation signs too */
            previousSecretExpiresAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /**
         * WebhookWithSecret
         * @description A subscription with its signing secret.
         */
        WebhookWithSecret: {
            /** @description Subscription id */
            id: string;
            url: string;
            events: string[];
            /** @description For people: at most 500 characters, without control characters or lone surrogates; null for none */
            description: string | null;
            disabled: boolean;
            /** @description `failing`: disabled automatically after failing for the configured time */
            disabledReason: "manual" | "failing" | null;
            disabledAt: string | null;
            /** @description Start of the current run of failed attempts */
            failingSince: string | null;
            /** @description Until then, the secret replaced by the last rotation signs too */
            previousSecretExpiresAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description The signing secret, shown only in this answer */
            secret: string;
        };
        /**
         * Delivery
         * @description One event for one subscription, with its latest attempt.
         */
        Delivery: {
            /** @description Delivery id */
            id: string;
            /** @description The `webhook-id` header: stable across attempts and replays */
            eventId: string;
            eventType: string;
            status: "pending" | "succeeded" | "failed";
            /**
             * Format: int32
             * @description Attempts since the delivery was queued (or requeued)
             */
            attempts: number;
            nextAttemptAt: string | null;
            lastAttemptAt: string | null;
            lastStatusCode: number | null;
            lastError: string | null;
            lastDurationMs: number | null;
            /** Format: date-time */
            createdAt: string;
        };
        /**
         * DeliveryAttempt
         * @description One attempt of a delivery, as its outcome was recorded.
         */
        DeliveryAttempt: {
            /**
             * Format: date-time
             * @description When the attempt ended (for a delivery's latest attempt, its lastAttemptAt)
             */
            attemptedAt: string;
            /** Format: int32 */
            durationMs: number;
            /** @description The receiver's HTTP status; null when no answer came */
            statusCode: number | null;
            /** @description Why the attempt failed: the status (`answered 500`) or the network error (a timeout, a refused connection, a refused address); null when it succeeded */
            error: string | null;
            /** @description The first 1024 bytes of the receiver's answer, read as UTF-8: each sequence of bytes that is not UTF-8 (a character cut at the end too) is U+FFFD; null when no answer came */
            body: string | null;
            /** @description The answer went on past `body` */
            bodyTruncated: boolean;
        };
        /** ReplayRequest */
        ReplayRequest: {
            /**
             * Format: date-time
             * @description Resend every event from this time on (RFC 3339, not in the future; a leap second :60 means the end of its minute)
             */
            since: string;
        };
        /** RecoverRequest */
        RecoverRequest: {
            /**
             * Format: date-time
             * @description Resend the deliveries that ended failed (their last attempt) from this time on (RFC 3339, not in the future; a leap second :60 means the end of its minute)
             */
            since: string;
        };
        /** ReplayResult */
        ReplayResult: {
            /** Format: int64 */
            queued: bigint;
        };
        /**
         * PlantEvent
         * @description A Standard Webhooks message: the plant as stored (for plant.deleted, as it was). Headers webhook-id, webhook-timestamp and webhook-signature sign it.
         */
        PlantEvent: {
            type: "plant.created" | "plant.updated" | "plant.deleted";
            /** Format: date-time */
            timestamp: string;
            data: components["schemas"]["StoredPlant"];
        };
        /**
         * TestEvent
         * @description The message POST /webhooks/{id}/test sends to that subscription alone, signed like every other.
         */
        TestEvent: {
            /** @enum {string} */
            type: "webhook.test";
            /** Format: date-time */
            timestamp: string;
            data: {
                /** @description Subscription id */
                webhookId: string;
            };
        };
        /**
         * NewToken
         * @description A token to issue, as `plantstore token create` takes it. Unknown fields are ignored.
         */
        NewToken: {
            /** @description What the token is for: 1 to 100 characters (trimmed), without control or bidirectional formatting characters */
            name: string;
            /** @description What the token may do: only scopes the calling token holds itself */
            scopes: ("plants:read" | "plants:write" | "webhooks:manage" | "metrics:read" | "tokens:manage" | "events:read")[];
            /** @description Lifetime as a duration such as `30s`, `15m`, `12h`, `30d` (1s to 36500d), ending no later than the calling token's expiry (40304 otherwise); absent or null: it expires with the calling token (never, if that one never does) */
            expiresIn?: string | null;
            /** @description No larger count and no faster rate than the calling token's limit (its own, or the service-wide one; 40304 otherwise); absent or null: the calling token's own limit, if it has one */
            rateLimit?: string | null;
        };
        /** TokenRollRequest */
        TokenRollRequest: {
            /** @description How long the replaced secret keeps working, a duration from `0s` (it stops at once) to 30d; default `24h` */
            overlap?: string;
        };
        /**
         * Token
         * @description A bearer token (never its secret).
         */
        Token: {
            /** @description The public id of a token: the 16 hex digits after `pst_` */
            id: string;
            name: string;
            /** @description The start of the token, `pst_<id>_`, to recognise it by */
            prefix: string;
            scopes: string[];
            /** Format: date-time */
            createdAt: string;
            /** @description null: it never expires */
            expiresAt: string | null;
            /** @description When a request last used it, written at most once a minute */
            lastUsedAt: string | null;
            revokedAt: string | null;
            status: "active" | "expired" | "revoked";
            /** @description Its own limit as `COUNT/WINDOW`; null: the service-wide one applies */
            rateLimit: string | null;
            /** @description Until then, the secret replaced by the last roll works too; null: no overlap is running */
            previousSecretExpiresAt: string | null;
            /** @description Who issued it over HTTP: a token (`tokenId`) or a JWT (its `iss` and `sub`); null: issued on the database host with `plantstore token create` */
            createdBy: {
                /** @description The public id of a token: the 16 hex digits after `pst_` */
                tokenId: string;
            } | {
                iss: string;
                sub: string;
            } | null;
        };
        /**
         * TokenWithSecret
         * @description A token with its secret.
         */
        TokenWithSecret: {
            /** @description The public id of a token: the 16 hex digits after `pst_` */
            id: string;
            name: string;
            /** @description The start of the token, `pst_<id>_`, to recognise it by */
            prefix: string;
            scopes: string[];
            /** Format: date-time */
            createdAt: string;
            /** @description null: it never expires */
            expiresAt: string | null;
            /** @description When a request last used it, written at most once a minute */
            lastUsedAt: string | null;
            revokedAt: string | null;
            status: "active" | "expired" | "revoked";
            /** @description Its own limit as `COUNT/WINDOW`; null: the service-wide one applies */
            rateLimit: string | null;
            /** @description Until then, the secret replaced by the last roll works too; null: no overlap is running */
            previousSecretExpiresAt: string | null;
            /** @description Who issued it over HTTP: a token (`tokenId`) or a JWT (its `iss` and `sub`); null: issued on the database host with `plantstore token create` */
            createdBy: {
                /** @description The public id of a token: the 16 hex digits after `pst_` */
                tokenId: string;
            } | {
                iss: string;
                sub: string;
            } | null;
            /** @description The whole bearer token, shown only in this answer: send it as `Authorization: Bearer <secret>` */
            secret: string;
        };
        /**
         * Change
         * @description One change to a plant, the same in a plant's history, the change feed and the live stream.
         */
        Change: {
            /** @description The change's place in commit order, opaque: pass it as `after` to GET /events (or as `Last-Event-ID`) to read the changes after this one */
            cursor: string;
            type: "plant.created" | "plant.updated" | "plant.deleted";
            /**
             * Format: date-time
             * @description When the change was written
             */
            time: string;
            /** @description Who made the change: a token (`tokenId`, its public id), a JWT (its `iss` and `sub`), or a command on the database host (`cli`); null for a change stored before changes recorded their actor */
            actor: {
                /** @description The public id of a token: the 16 hex digits after `pst_` */
                tokenId: string;
            } | {
                iss: string;
                sub: string;
            } | {
                /** @description The command, e.g. `import` */
                cli: string;
            } | null;
            /** @description The `X-Request-Id` of the response that made the change; null for a command */
            requestId: string | null;
            /** @description The plant before the change; null for plant.created */
            before: components["schemas"]["StoredPlant"] | null;
            /** @description The plant after the change; null for plant.deleted */
            after: components["schemas"]["StoredPlant"] | null;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process is up: `{"status": "ok"}` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                    };
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    ready: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready to serve: `{"status": "ready"}` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                    };
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPlants: {
        parameters: {
            query?: {
                /** @description Only plants whose name contains this text, case-insensitively: both are compared lower-cased by Unicode's rules (`ölb` finds Ölbaum, `σίγμα` finds ΣΊΓΜΑ) and composed (NFC), accents kept (`ölb` does not find OLBAUM). `%`, `_` and `\` are ordinary characters. 1 to 200 characters, without control characters (else 400, 40012). */
                q?: string;
                /** @description Only plants whose tag is one of these, matched exactly: `tag=fern&tag=aroid`. Each 1 to 100 characters, at most 20 of them (else 400, 40012). */
                tag?: string[];
                /** @description The order: a field, ascending, or with a leading `-`, descending. Names compare by Unicode code point; plants with the same name or time follow in id order, in the same direction. Anything else is 400 (40012). */
                sort?: "id" | "-id" | "name" | "-name" | "createdAt" | "-createdAt" | "updatedAt" | "-updatedAt";
                /** @description true: the response carries `X-Total-Count`, the number of plants the filters keep (all pages, not only this one). Counting reads them all, so it is left out unless asked. Anything but `true` or `false`, or given twice, is 400 (40012). */
                count?: boolean;
                /** @description Page size, 1 to 1000 (else 400, 40012) */
                limit?: number;
                /** @description Only plants with a greater id, a signed 64-bit integer (-9223372036854775808 to 9223372036854775807), in the ascending id order only: with another `sort`, or beside `cursor`, it is 400 (40012). Pages of any order are linked with `cursor`. */
                after?: bigint;
                /** @description Where the page starts, opaque: take it from the `Link: rel="next"` header of the previous page, whose URL also repeats the `q`, `tag`, `sort` and `count` it belongs to. A cursor that was changed, or one sent with another `sort`, `q` or `tag` than its page had, is 400 (40012). */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of plants */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` */
                    Link?: string;
                    /** @description With `count=true`: how many plants the filters keep, on every page */
                    "X-Total-Count"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"][];
                };
            };
            /** @description The request is invalid (error codes: 40012, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes retries safe: 1 to 255 visible characters, bare or as a quoted string. A retry with the same key and the same content replays the first answer; with different content it is 422; while the first is still running, 409. Kept 24 hours (configurable), per token. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description Plant response: the stored plant, id included */
            200: {
                headers: {
                    /** @description The version of the plant, for If-Match and If-None-Match */
                    ETag?: string;
                    /** @description "true" on a replay */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40014, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict (error codes: 40901, 40902) */
            409: {
                headers: {
                    /** @description On 40902: seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable (error codes: 42201) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Apply only if the plant still has one of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-match"?: string;
                /** @description Answer 304 without a body if the plant still has one of these ETags */
                "if-none-match"?: string;
            };
            path: {
                /**
                 * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
                 * @example 42
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plant */
            200: {
                headers: {
                    /** @description The version of the plant, for If-Match and If-None-Match */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description Not modified: the plant still has the ETag given */
            304: {
                headers: {
                    /** @description The version of the plant, for If-Match and If-None-Match */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (error codes: 40011, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40402) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Precondition failed (error codes: 41201) */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    replacePlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Apply only if the plant still has one of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-match"?: string;
                /** @description Apply only if the plant has none of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-none-match"?: string;
            };
            path: {
                /**
                 * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
                 * @example 42
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Plant"];
            };
        };
        responses: {
            /** @description The plant as replaced */
            200: {
                headers: {
                    /** @description The version of the plant, for If-Match and If-None-Match */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40011, 40005, 40006, 40007, 40008, 40009, 40010, 40013, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40402) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Precondition failed (error codes: 41201) */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Apply only if the plant still has one of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-match"?: string;
                /** @description Apply only if the plant has none of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-none-match"?: string;
            };
            path: {
                /**
                 * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
                 * @example 42
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (error codes: 40011, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40402) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Precondition failed (error codes: 41201) */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updatePlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Apply only if the plant still has one of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-match"?: string;
                /** @description Apply only if the plant has none of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way */
                "if-none-match"?: string;
            };
            path: {
                /**
                 * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
                 * @example 42
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/merge-patch+json": components["schemas"]["PlantPatch"];
                "application/json": components["schemas"]["PlantPatch"];
            };
        };
        responses: {
            /** @description The plant as changed */
            200: {
                headers: {
                    /** @description The version of the plant, for If-Match and If-None-Match */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40011, 40005, 40006, 40007, 40008, 40009, 40010, 40013, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40402) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Precondition failed (error codes: 41201) */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    /** @description The patch formats the operation takes: application/merge-patch+json, application/json */
                    "Accept-Patch"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPlantHistory: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 500 (else 400, 40012) */
                limit?: number;
                /** @description Only changes older than this cursor: take it from the `Link: rel="next"` header of the previous page (or a change's `cursor`). Anything else is 400 (40080). */
                before?: string;
            };
            header?: never;
            path: {
                /**
                 * @description Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.
                 * @example 42
                 */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the plant's changes, newest first */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Change"][];
                    };
                };
            };
            /** @description The request is invalid (error codes: 40011, 40012, 40080, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPlants: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes retries safe: 1 to 255 visible characters, bare or as a quoted string. A retry with the same key and the same content replays the first answer; with different content it is 422; while the first is still running, 409. Kept 24 hours (configurable), per token. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlants"];
            };
        };
        responses: {
            /** @description The plants created, in the order sent */
            200: {
                headers: {
                    /** @description "true" on a replay */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlants"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40070, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40014, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict (error codes: 40901, 40902, 40903) */
            409: {
                headers: {
                    /** @description On 40902: seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable (error codes: 42201) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePlants: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantDeletion"];
            };
        };
        responses: {
            /** @description The ids deleted, in the order sent */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedPlants"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40071, 40005, 40072, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40402) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict (error codes: 40903) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listChanges: {
        parameters: {
            query?: {
                /** @description Only changes after this cursor, in commit order: the `next` of the previous page, or a change's `cursor`. Opaque; anything else is 400 (40080). A cursor older than what retention keeps is 410 (41001). Absent: from the oldest change kept. */
                after?: string;
                /** @description Page size, 1 to 1000 (else 400, 40012) */
                limit?: number;
                /** @description Only changes of these types, the parameter repeated: `type=plant.created&type=plant.deleted`. Every type when absent (else 400, 40012). */
                type?: ("plant.created" | "plant.updated" | "plant.deleted")[];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of changes in commit order, and where to read on from */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Change"][];
                        /** @description Pass it as `after` to read the changes that follow; present even when `data` is empty. Keep it to read every change exactly once. */
                        next: string;
                    };
                };
            };
            /** @description The request is invalid (error codes: 40012, 40080, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Gone (error codes: 41001) */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every series of this instance, in the Prometheus text exposition format 0.0.4 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every subscription, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Webhook"][];
                    };
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhook"];
            };
        };
        responses: {
            /** @description The subscription, with its secret */
            201: {
                headers: {
                    /** @description The subscription: `/webhooks/{id}` */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookWithSecret"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40050, 40051, 40052, 40053, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/merge-patch+json": components["schemas"]["WebhookUpdate"];
                "application/json": components["schemas"]["WebhookUpdate"];
            };
        };
        responses: {
            /** @description The subscription as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40050, 40051, 40052, 40053, 40054, 40056, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    /** @description The patch formats the operation takes: application/merge-patch+json, application/json */
                    "Accept-Patch"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription, with its new secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookWithSecret"];
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    testWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The queued delivery */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Page size */
                limit?: number;
                /** @description Cursor: only deliveries listed after this place (older ones). Take it from the `Link: rel="next"` header of the previous page. */
                after?: string;
                /** @description Only deliveries in this state */
                status?: "pending" | "succeeded" | "failed";
            };
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries, newest first */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Delivery"][];
                    };
                };
            };
            /** @description The request is invalid (error codes: 40012, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retryWebhookDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
                /** @description Delivery id */
                deliveryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The queued delivery */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450, 40451) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveryAttempts: {
        parameters: {
            query?: {
                /** @description Page size */
                limit?: number;
                /** @description Cursor: only attempts listed after this place (older ones). Take it from the `Link: rel="next"` header of the previous page. */
                after?: string;
            };
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
                /** @description Delivery id */
                deliveryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of attempts, newest first */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["DeliveryAttempt"][];
                    };
                };
            };
            /** @description The request is invalid (error codes: 40012, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450, 40451) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    replayWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReplayRequest"];
            };
        };
        responses: {
            /** @description How many deliveries were queued */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReplayResult"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40055, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    recoverWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription id */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecoverRequest"];
            };
        };
        responses: {
            /** @description How many failed deliveries were queued again */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReplayResult"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40055, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40450) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listTokens: {
        parameters: {
            query?: {
                /** @description Page size */
                limit?: number;
                /** @description Cursor: only tokens created after this place. Take it from the `Link: rel="next"` header of the previous page. */
                after?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of tokens, oldest first */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Token"][];
                    };
                };
            };
            /** @description The request is invalid (error codes: 40012, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewToken"];
            };
        };
        responses: {
            /** @description The token, with its secret */
            201: {
                headers: {
                    /** @description The token: `/tokens/{id}` */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenWithSecret"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40060, 40061, 40062, 40063, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301, 40302, 40304) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The public id of a token: the 16 hex digits after `pst_` */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The token */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40460) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokeToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The public id of a token: the 16 hex digits after `pst_` */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked (now or before) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40460) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rollToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The public id of a token: the 16 hex digits after `pst_` */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRollRequest"];
            };
        };
        responses: {
            /** @description The token, with its new secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenWithSecret"];
                };
            };
            /** @description The request is invalid (error codes: 40001, 40002, 40003, 40064, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301, 40303, 40304) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40460, 40461) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request took too long to arrive (error codes: 40801) */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large (error codes: 41301) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type (error codes: 41501) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCaller: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Who the token speaks for, as the changes it makes record it */
                        actor: {
                            /** @description The public id of a token: the 16 hex digits after `pst_` */
                            tokenId: string;
                        } | {
                            iss: string;
                            sub: string;
                        };
                        /** @description The token's name, or a JWT's subject */
                        name: string;
                        /** @description What the token may do */
                        scopes: string[];
                        /** @description null: it never expires */
                        expiresAt: string | null;
                    };
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    streamChanges: {
        parameters: {
            query?: {
                /** @description Resume after this change's cursor, for a client that cannot send `Last-Event-ID` (which wins when both are given) */
                after?: string;
            };
            header?: {
                /** @description Resume right after this change's cursor */
                "last-event-id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream: `id: <cursor>` and `data: <change>` per change */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description The request is invalid (error codes: 40080, 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118, 40120, 40121) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Gone (error codes: 41001) */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50302, 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createStreamTicket: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A stream ticket for the token that asked for it */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Opens streams as `GET /events/stream?ticket=…` until it expires */
                        ticket: string;
                        /** Format: date-time */
                        expiresAt: string;
                    };
                };
            };
            /** @description The request is invalid (error codes: 40000) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused (error codes: 40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118) */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    /** @description The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Expectation failed (error codes: 41701) */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    /** @description Requests allowed per window */
                    "RateLimit-Limit"?: string;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: string;
                    /** @description Seconds until the window resets */
                    "RateLimit-Reset"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected error (error codes: 50001) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    plant_created_event: {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantEvent"];
            };
        };
        responses: {
            /** @description Received (any 2xx will do) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    plant_updated_event: {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantEvent"];
            };
        };
        responses: {
            /** @description Received (any 2xx will do) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    plant_deleted_event: {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantEvent"];
            };
        };
        responses: {
            /** @description Received (any 2xx will do) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhook_test_event: {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TestEvent"];
            };
        };
        responses: {
            /** @description Received (any 2xx will do) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
