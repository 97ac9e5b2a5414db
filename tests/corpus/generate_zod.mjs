// Regenerate zod_to_json_schema.json (run where `npm install zod@3 zod-to-json-schema` was run):
//   node generate_zod.mjs > zod_to_json_schema.json
// Each schema is a tool's arguments as a TypeScript tool author would write them with zod;
// the JSON is exactly what zodToJsonSchema() prints (its default target, draft-07).
import { readFileSync } from "node:fs";
import { z } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";

const versions = ["zod", "zod-to-json-schema"].map((name) => `${name} ${
  JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")).version}`);

const Node = z.lazy(() => z.object({ name: z.string(), children: z.array(Node).optional() }));

const tools = {
  create_issue: z.object({
    title: z.string().min(1).max(256).describe("Issue title"),
    body: z.string().optional(),
    labels: z.array(z.string()).max(10).default([]),
    assignee: z.string().email().nullable(),
    milestone: z.number().int().positive().optional(),
  }),
  http_request: z.object({
    url: z.string().url(),
    method: z.enum(["GET", "POST", "PUT", "DELETE"]).default("GET"),
    headers: z.record(z.string()).optional().describe("Extra request headers"),
    body: z.union([z.string(), z.record(z.any())]).optional(),
    timeout_ms: z.number().min(0).max(60000).default(30000),
  }),
  draw_shape: z.object({
    shape: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("circle"), radius: z.number() }),
      z.object({ kind: z.literal("rect"), width: z.number(), height: z.number() }),
    ]),
    at: z.tuple([z.number(), z.number()]),
    color: z.string().regex(/^#[0-9a-f]{6}$/).optional(),
  }),
  save_tree: z.object({ root: Node, dry_run: z.boolean().default(false) }),
  set_config: z.object({
    key: z.string(),
    value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
    scope: z.literal("user").or(z.literal("project")),
  }).strict(),
  search_issues: z.object({
    query: z.string().describe("Search text"),
    extra: z.record(z.string(), z.unknown()).optional().describe("Extra filters, by field"),
  }),
  run_query: z.object({
    sql: z.string(),
    params: z.array(z.any()).optional(),
    options: z.object({ limit: z.number().int().default(100) }).passthrough().optional(),
  }),
};

const schemas = Object.fromEntries(
  Object.entries(tools).map(([name, schema]) => [name, zodToJsonSchema(schema)]));
console.log(JSON.stringify({
  source: `${versions.join(", ")}: zodToJsonSchema() of the schemas in generate_zod.mjs`,
  schemas,
}, null, 1));
