/**
 * `/openapi.json` of `kimi web`: an OpenAPI 3.1 document generated from the routes' zod
 * schemas (the routes register what they validate and answer; nothing is written twice).
 *
 * @module
 */
import * as z from "zod";
import { VERSION } from "../../../version.ts";

/** What one route declares for the API document. */
export interface RouteDoc {
  /** HTTP method (lower case). */
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI path (`{id}` parameters). */
  path: string;
  /** One line on what it does. */
  summary: string;
  /** JSON request body schema. */
  body?: z.ZodType;
  /** A multipart upload with one `file` field. */
  multipart?: boolean;
  /** Query parameters (an object schema). */
  query?: z.ZodObject;
  /** JSON response schema (200). */
  response?: z.ZodType;
  /** A binary response (`application/octet-stream`). */
  binary?: boolean;
  /** Error statuses it answers with `{detail}`. */
  errors?: number[];
}

function schema(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const out = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

const DESCRIPTIONS: Record<number, string> = {
  400: "Bad request",
  401: "Missing or wrong token",
  403: "Refused",
  404: "Not found",
  413: "Body too large",
  422: "Validation error",
  429: "Too many failed auth attempts",
  500: "Server error",
};

/** The OpenAPI document of `routes`. */
export function openApiDocument(routes: readonly RouteDoc[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    if (r.query) {
      for (const [name, s] of Object.entries(r.query.shape)) {
        params.push({
          name,
          in: "query",
          required: false,
          schema: schema(s as z.ZodType, "input") as { type: string },
        });
      }
    }
    const responses: Record<string, unknown> = {
      "200": {
        description: "OK",
        content: r.binary
          ? { "application/octet-stream": { schema: { type: "string", format: "binary" } } }
          : { "application/json": { schema: r.response ? schema(r.response, "output") : {} } },
      },
    };
    for (const code of [401, 429, ...(r.errors ?? [])]) {
      responses[String(code)] = {
        description: DESCRIPTIONS[code] ?? "Error",
        content: {
          "application/json": {
            schema: code === 422 ? { $ref: "#/components/schemas/ValidationError" } : {
              $ref: "#/components/schemas/Error",
            },
          },
        },
      };
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      parameters: params,
      responses,
      security: [{ bearer: [] }],
    };
    if (r.body) {
      op.requestBody = {
        required: false,
        content: { "application/json": { schema: schema(r.body, "input") } },
      };
    } else if (r.multipart) {
      op.requestBody = {
        required: true,
        content: {
          "multipart/form-data": {
            schema: {
              type: "object",
              properties: { file: { type: "string", format: "binary" } },
              required: ["file"],
            },
          },
        },
      };
    }
    (paths[r.path] ??= {})[r.method] = op;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "kimi web",
      version: VERSION,
      description: "The local server of `kimi web`. Every /api/ route needs the token " +
        "(Authorization: Bearer <token>; GET and the WebSocket also take ?token=). The " +
        "WebSocket /api/sessions/{id}/stream carries the wire protocol's JSON-RPC both ways.",
    },
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        Error: { type: "object", properties: { detail: { type: "string" } }, required: ["detail"] },
        ValidationError: {
          type: "object",
          properties: {
            detail: {
              type: "array",
              items: {
                type: "object",
                properties: {
                  loc: { type: "array", items: { type: ["string", "integer"] } },
                  msg: { type: "string" },
                  type: { type: "string" },
                },
              },
            },
          },
        },
      },
    },
  };
}
