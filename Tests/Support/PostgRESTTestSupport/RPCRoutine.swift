import Foundation
import Postgres

/// A function as PostgREST's schema cache describes one, and how `POST /rpc/<name>` calls it.
///
/// Looked up in `pg_proc` on every request (PostgREST reads them once into its schema cache and
/// again on `NOTIFY pgrst`; Supabase reloads it on every DDL through an event trigger, so "always
/// fresh" is what an app sees). The description follows PostgREST's `funcsSqlQuery`
/// (`src/PostgREST/SchemaCache.hs`): the input parameters (modes `i`, `b`, `v`) with their names and
/// `regtype` names (`character` and `bit` widened to their varying forms), which of them have no
/// default, whether it returns a set, and whether its result is composite (a table type, or `OUT`,
/// `INOUT` or `TABLE` parameters).
struct RPCRoutine: Sendable {
  struct Parameter: Sendable {
    var name: String
    var type: String
    var isRequired: Bool
    var isVariadic: Bool
  }

  var schema: String
  var name: String
  var parameters: [Parameter]
  var returnsSet: Bool
  var returnsComposite: Bool
  var returnsVoid: Bool
  /// `v`, `s` or `i`: a `POST` runs a `VOLATILE` function in a `READ WRITE` transaction, a `STABLE`
  /// or `IMMUTABLE` one in a `READ ONLY` one (docs: "Transactions", "Access Mode on Functions").
  var volatility: String

  var returnsScalar: Bool { !returnsComposite }

  /// The functions of `schema` named `name` (PostgREST's callable ones: plain functions, not
  /// procedures, aggregates or trigger functions, with at most one unnamed parameter of a type it
  /// can pass a whole body to).
  static let lookupSQL = """
    SELECT p.proretset AS setof,
           (t.typtype = 'c' OR coalesce(p.proargmodes::text[] && '{t,b,o}', false)) AS composite,
           (p.prorettype = 'pg_catalog.void'::pg_catalog.regtype) AS void,
           p.provolatile::text AS volatility,
           p.pronargs - p.pronargdefaults AS required,
           coalesce((
             SELECT json_agg(json_build_object(
                      'name', coalesce(a.name, ''),
                      'type', CASE a.type
                                WHEN 'bit'::regtype THEN 'bit varying'
                                WHEN 'bit[]'::regtype THEN 'bit varying[]'
                                WHEN 'character'::regtype THEN 'character varying'
                                WHEN 'character[]'::regtype THEN 'character varying[]'
                                ELSE a.type::regtype::text
                              END,
                      'variadic', coalesce(a.mode = 'v', false)) ORDER BY a.idx)
             FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]), p.proargnames, p.proargmodes)
                    WITH ORDINALITY AS a(type, name, mode, idx)
             WHERE coalesce(a.mode, 'i') IN ('i', 'b', 'v')
           ), '[]')::text AS parameters
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
    JOIN pg_catalog.pg_type t ON t.oid = p.prorettype
    WHERE n.nspname = $1 AND p.proname = $2 AND p.prokind = 'f' AND p.prorettype <> 'pg_catalog.trigger'::regtype
    ORDER BY p.oid
    """

  /// The routines in `rows` of ``lookupSQL``.
  static func routines(
    _ rows: PostgresRows, schema: String, name: String
  ) throws(PostgresError) -> [RPCRoutine] {
    var routines: [RPCRoutine] = []
    for row in 0..<rows.count {
      let text = try rows.string(row, "parameters")
      let list = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
      let required = try rows.integer(row, "required", as: Int.self)
      let parameters = list.enumerated().map { index, parameter in
        Parameter(
          name: parameter["name"] as? String ?? "", type: parameter["type"] as? String ?? "text",
          isRequired: index < required, isVariadic: parameter["variadic"] as? Bool ?? false)
      }
      routines.append(
        RPCRoutine(
          schema: schema, name: name, parameters: parameters,
          returnsSet: try rows.string(row, "setof") == "t",
          returnsComposite: try rows.string(row, "composite") == "t",
          returnsVoid: try rows.string(row, "void") == "t",
          volatility: try rows.string(row, "volatility")))
    }
    return routines
  }

  /// Whether a body with these keys calls this routine: PostgREST's `findProc`. With no
  /// parameters, no keys; with only required ones, exactly their names; with only optional ones,
  /// any subset; with both, all the required and any of the optional.
  func matches(_ keys: Set<String>) -> Bool {
    guard !parameters.isEmpty else { return keys.isEmpty }
    let required = Set(parameters.filter(\.isRequired).map(\.name))
    let optional = Set(parameters.filter { !$0.isRequired }.map(\.name))
    return keys.subtracting(optional) == required
  }

  /// `schema.name(a => type, …)`, as PostgREST's ambiguity message lists a candidate.
  var signature: String {
    "\(schema).\(name)(" + parameters.map { "\($0.name) => \($0.type)" }.joined(separator: ", ") + ")"
  }

  /// The call for a body with these keys: PostgREST's `callPlanToQuery` and `mainCall`
  /// (`src/PostgREST/Query/QueryBuilder.hs`, `Statements.hs`). The body (`$1`, when there are
  /// arguments) is read by `json_to_record` with the parameters' types, and each argument is
  /// bound by name (`"p_a" := pgrst_body."p_a"`), so the keys' order never matters and a JSON
  /// object reaches a `jsonb` parameter as it is. The result is one text column `body`: a scalar
  /// function's value, a single composite's object, a set's array (of values or of objects).
  func callSQL(keys: Set<String>) -> String {
    let function = quote(schema) + "." + quote(name)
    let given = parameters.filter { keys.contains($0.name) }
    let arguments = given.map {
      ($0.isVariadic ? "VARIADIC " : "") + "\(quote($0.name)) := pgrst_body.\(quote($0.name))"
    }
    .joined(separator: ", ")
    func call(_ arguments: String) -> String {
      returnsScalar
        ? "(SELECT \(function)(\(arguments)) pgrst_scalar) pgrst_call"
        : "\(function)(\(arguments)) pgrst_call"
    }
    let from: String
    if given.isEmpty {
      from = "FROM " + call("")
    } else {
      let columns = given.map { quote($0.name) }.joined(separator: ", ")
      let typed = given.map { "\(quote($0.name)) \($0.type)" }.joined(separator: ", ")
      from =
        "FROM (SELECT $1::json AS json_data) pgrst_payload, "
        + "LATERAL (SELECT \(columns) FROM json_to_record(pgrst_payload.json_data) AS _(\(typed)) LIMIT 1) pgrst_body, "
        + "LATERAL " + call(arguments)
    }
    let selected = returnsScalar ? "pgrst_call.pgrst_scalar" : "pgrst_call.*"
    let aggregate: String
    // Each aggregate reads the call's values, so the call runs even when the function is STABLE
    // (a void one's body is not sent: 204).
    switch (returnsSet, returnsScalar) {
    case (false, true): aggregate = "coalesce(json_agg(_postgrest_t.pgrst_scalar)->0, 'null')::text"
    case (false, false): aggregate = "coalesce(json_agg(_postgrest_t)->0, 'null')::text"
    case (true, true): aggregate = "coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')::text"
    case (true, false): aggregate = "coalesce(json_agg(_postgrest_t), '[]')::text"
    }
    return "WITH pgrst_source AS (SELECT \(selected) \(from)) "
      + "SELECT \(aggregate) AS body FROM (SELECT * FROM pgrst_source) _postgrest_t"
  }
}

/// `"name"`, with `"` doubled: a quoted SQL identifier.
func quote(_ identifier: String) -> String {
  "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
