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
         * Lists plants in ascending id order, one page at a time
         * @description The body is a plain array. When another page may follow, a `Link: <…>; rel="next"` header gives its address; the last page has none.
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
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics of this instance (text exposition format) */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
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
         * @description A plant without its id: the body of a full replacement (PUT). No tag means the plant has none. An id, when present, must equal the one in the path. Unknown fields are ignored.
         */
        Plant: {
            /** @description The name of the plant */
            name: string;
            /** @description Tag that specifies the type of the plant */
            tag?: string;
        };
        /**
         * PlantPatch
         * @description A JSON merge patch (RFC 7386) of a plant: the fields it names are set, `tag: null` removes the tag, absent fields stay.
         */
        PlantPatch: {
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
         * Error
         * @description Every failure, with a stable code from the error catalog.
         */
        Error: {
            /**
             * Format: int32
             * @description Stable numeric error code
             * @enum {integer}
             */
            error: 40000 | 40001 | 40002 | 40003 | 40004 | 40005 | 40006 | 40007 | 40008 | 40009 | 40010 | 40011 | 40012 | 40013 | 40014 | 40015 | 40101 | 40102 | 40103 | 40104 | 40105 | 40301 | 40401 | 40402 | 40501 | 40801 | 40901 | 40902 | 41201 | 41301 | 41401 | 41501 | 42201 | 42901 | 43101 | 50001 | 50301;
            /** @description Text of the error */
            message: string;
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
            /** @description Default Response */
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
            /** @description Default Response */
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
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
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
                /** @description Page size */
                limit?: number;
                /** @description Keyset cursor: only plants with a greater id. Take it from the `Link: rel="next"` header of the previous page. */
                after?: bigint;
                /** @description Only plants with this tag */
                tag?: string;
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"][];
                };
            };
            /** @description The request is invalid (error codes: 40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012, 40013, 40014, 40015) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
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
            /** @description The request is invalid (error codes: 40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012, 40013, 40014, 40015) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
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
            /** @description The request is invalid (error codes: 40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012, 40013, 40014, 40015) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40401, 40402) */
            404: {
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
                /** @description Apply only if the plant still has one of these ETags (else 412) */
                "if-match"?: string;
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
            /** @description The request is invalid (error codes: 40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012, 40013, 40014, 40015) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40401, 40402) */
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
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
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
                /** @description Apply only if the plant still has one of these ETags (else 412) */
                "if-match"?: string;
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
            /** @description The request is invalid (error codes: 40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012, 40013, 40014, 40015) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40401, 40402) */
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
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
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
                /** @description Apply only if the plant still has one of these ETags (else 412) */
                "if-match"?: string;
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
            /** @description The request is invalid (error codes: 40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012, 40013, 40014, 40015) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (error codes: 40401, 40402) */
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
            /** @description Rate limited (error codes: 42901) */
            429: {
                headers: {
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
            /** @description Missing, malformed, unknown, expired or revoked bearer token (error codes: 40101, 40102, 40103, 40104, 40105) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the required scope (error codes: 40301) */
            403: {
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Temporarily unavailable (error codes: 50301) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
