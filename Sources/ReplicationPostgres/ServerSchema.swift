import Foundation
import Postgres

/// The server side of replication: versioned SQL, applied by `eventlog remote init`.
///
/// Everything lives in the schema `eventlog`; `Docs/Replication.md` explains each piece. The
/// rules the server enforces itself, whatever the client does:
///
/// - **Append-only**: a trigger refuses every `UPDATE`, `DELETE` and `TRUNCATE` of
///   `eventlog.events`, and no role is granted those privileges.
/// - **Owner-isolated**: row-level security (forced, so the tables' owner is held to it too)
///   lets a role read and append only rows whose `owner` is ``currentOwner``, the connecting
///   role; the column defaults to it, so a client never names an owner.
/// - **Gap-free positions that commit in order**: a push takes the owner's advisory lock for the
///   rest of its transaction, reads the owner's last position and appends after it, so the next
///   push of the owner waits for this one to commit; a statement trigger checks that every insert,
///   through `push` or not, continues the owner's positions without a gap.
///
/// - **Work bounded by what the server computes** (from version 4): a pulled page is budgeted
///   by the stored length of its payloads' text, a payload whose text is out of proportion to it
///   is never rendered, and an owner holds at most two waiting pulls at once.
/// - **The devices' chains anchored** (from version 5): each owner's rows carry a chain of the
///   server's own (SHA-256 over positions), each push attests the device's chain value at its
///   mark (`eventlog.attested_heads`, append-only), and each row keeps its recorded origin beside
///   the device that pushed it.
/// - **Personal data's keys and erasures** (from version 6): each owner's data subjects' keys
///   (`eventlog.subject_keys`, one per subject, the first pushed kept) and erasure fences
///   (`eventlog.erased_subjects`); storing a `SubjectErased` event deletes the subject's key and
///   fences it in the same transaction, and a key of a fenced subject is refused.
///
/// The operations are SQL functions (`push`, `pull`, `pull_chained`, `attested_heads`,
/// `device_mark`, `head`, `channel`, `server_info`), so that
/// PostgREST's `rpc/` can call the very code a libpq client calls. None needs a superuser or an
/// extension.
public enum ServerSchema {
  /// The schema version this build writes and speaks.
  public static var latestVersion: Int { migrations.count }

  /// The oldest server schema whose functions this build can call: every function it calls
  /// takes and returns what it did in that version. A client refuses an older server
  /// (``ReplicationError/schemaTooOld(server:found:required:)``); between this and
  /// ``latestVersion`` it works, and `remote init` upgrades the server.
  public static let oldestServerVersion = 3

  /// The SQL that takes the schema from version n − 1 to n, for n = 1, 2, …
  ///
  /// A migration never changes once released: a new version appends one. A migration that
  /// changes what a function takes or returns also raises `eventlog.schema_info.clients_from`
  /// (from version 2), the oldest client schema that may still use the server; one that changes
  /// only how the functions work keeps it, so older clients go on working with an upgraded server.
  public static let migrations: [String] = [version1, version2, version3, version4, version5, version6]

  /// The expression every function and policy uses for the owner of the rows: the connecting
  /// role. (On Supabase, replace it with `auth.uid()::text` in `eventlog.current_owner()` and
  /// grant the functions to `authenticated` only; see `Docs/Replication.md`.)
  static let currentOwner = "current_user::text"

  /// The classid of the owners' advisory locks: `EVLG` in ASCII.
  static let lockClass = 1_163_283_527

  static let version1 = """
    CREATE FUNCTION eventlog.current_owner() RETURNS text
      LANGUAGE sql STABLE AS $$ SELECT \(currentOwner) $$;
    COMMENT ON FUNCTION eventlog.current_owner() IS
      'The owner of the rows a session may read and append: the connecting role.';

    CREATE TABLE eventlog.events (
      owner text NOT NULL DEFAULT eventlog.current_owner(),
      position bigint NOT NULL CHECK (position > 0),
      id uuid NOT NULL,
      origin_device uuid NOT NULL,
      origin_sequence bigint NOT NULL CHECK (origin_sequence > 0),
      stream text NOT NULL CHECK (stream <> '' AND octet_length(stream) <= 400),
      type text NOT NULL CHECK (type <> '' AND octet_length(type) <= 255),
      schema_version integer NOT NULL CHECK (schema_version BETWEEN 0 AND 65535),
      payload bytea NOT NULL CHECK (octet_length(payload) <= 67108864),
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb
        CHECK (jsonb_typeof(metadata) = 'object' AND octet_length(coalesce(metadata->>'origin', '')) <= 1000),
      recorded_at timestamptz NOT NULL,
      stored_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT events_pkey PRIMARY KEY (owner, position),
      CONSTRAINT events_id_key UNIQUE (id)
    );
    COMMENT ON TABLE eventlog.events IS
      'The shared log: each owner''s events at gap-free positions. Append-only.';

    CREATE FUNCTION eventlog.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'eventlog.events is append-only: % is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'An event is never changed or removed; append a new event instead.';
    END $$;
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON eventlog.events
      FOR EACH ROW EXECUTE FUNCTION eventlog.refuse_change();
    CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON eventlog.events
      FOR EACH STATEMENT EXECUTE FUNCTION eventlog.refuse_change();

    CREATE FUNCTION eventlog.check_positions() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      r record;
      previous bigint;
    BEGIN
      FOR r IN
        SELECT n.owner, min(n.position) AS first, max(n.position) AS last, count(*) AS total
        FROM new_events n GROUP BY n.owner
      LOOP
        PERFORM pg_advisory_xact_lock(\(lockClass), hashtext(r.owner));
        SELECT max(e.position) INTO previous FROM eventlog.events e
          WHERE e.owner = r.owner AND e.position < r.first;
        IF r.total <> r.last - r.first + 1 OR coalesce(previous, 0) <> r.first - 1 THEN
          RAISE EXCEPTION 'positions % to % of owner % do not continue its last position %',
            r.first, r.last, r.owner, coalesce(previous, 0)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'events_positions_gap_free';
        END IF;
      END LOOP;
      RETURN NULL;
    END $$;
    CREATE TRIGGER events_gap_free AFTER INSERT ON eventlog.events
      REFERENCING NEW TABLE AS new_events
      FOR EACH STATEMENT EXECUTE FUNCTION eventlog.check_positions();

    CREATE TABLE eventlog.devices (
      owner text NOT NULL DEFAULT eventlog.current_owner(),
      device uuid NOT NULL,
      pushed_through bigint NOT NULL DEFAULT 0 CHECK (pushed_through >= 0),
      last_push_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT devices_pkey PRIMARY KEY (owner, device)
    );
    COMMENT ON TABLE eventlog.devices IS
      'Each device''s pushed mark: the last local sequence the server holds, set with the events.';

    ALTER TABLE eventlog.events ENABLE ROW LEVEL SECURITY;
    ALTER TABLE eventlog.events FORCE ROW LEVEL SECURITY;
    CREATE POLICY events_read_own ON eventlog.events FOR SELECT
      USING (owner = eventlog.current_owner());
    CREATE POLICY events_append_own ON eventlog.events FOR INSERT
      WITH CHECK (owner = eventlog.current_owner());
    ALTER TABLE eventlog.devices ENABLE ROW LEVEL SECURITY;
    ALTER TABLE eventlog.devices FORCE ROW LEVEL SECURITY;
    CREATE POLICY devices_own ON eventlog.devices FOR ALL
      USING (owner = eventlog.current_owner()) WITH CHECK (owner = eventlog.current_owner());

    CREATE FUNCTION eventlog.push(p_device uuid, p_through bigint, p_events jsonb)
    RETURNS TABLE (event_id uuid, event_position bigint, already_stored boolean)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_owner text := eventlog.current_owner();
      v_head bigint;
    BEGIN
      IF jsonb_typeof(p_events) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_events must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      -- Pushes of one owner take turns from here to their commit: positions commit in order.
      PERFORM pg_advisory_xact_lock(\(lockClass), hashtext(v_owner));
      SELECT coalesce(max(e.position), 0) INTO v_head FROM eventlog.events e WHERE e.owner = v_owner;
      RETURN QUERY
      WITH input AS (
        SELECT (x.value->>'id')::uuid AS id, (x.value->>'seq')::bigint AS seq, x.value->>'stream' AS stream,
          x.value->>'type' AS type, (x.value->>'schemaVersion')::integer AS schema_version,
          decode(x.value->>'payload', 'base64') AS payload,
          coalesce(x.value->'metadata', '{}'::jsonb) AS metadata,
          (x.value->>'recordedAt')::bigint AS recorded_us, x.ordinality AS ord
        FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(value, ordinality)
      ),
      known AS (
        SELECT e.id, e.position FROM eventlog.events e
        WHERE e.owner = v_owner AND e.id IN (SELECT i.id FROM input i)
      ),
      fresh AS (
        SELECT i.*, row_number() OVER (ORDER BY i.ord) AS n FROM input i
        WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.id = i.id)
      ),
      inserted AS (
        INSERT INTO eventlog.events AS ev
          (owner, position, id, origin_device, origin_sequence, stream, type, schema_version, payload,
           metadata, recorded_at)
        SELECT v_owner, v_head + f.n, f.id, p_device, f.seq, f.stream, f.type, f.schema_version, f.payload,
          f.metadata, timestamptz 'epoch' + f.recorded_us * interval '1 microsecond'
        FROM fresh f ORDER BY f.n
        RETURNING ev.id, ev.position
      )
      SELECT i.id, coalesce(ins.position, k.position), k.position IS NOT NULL
      FROM input i LEFT JOIN inserted ins ON ins.id = i.id LEFT JOIN known k ON k.id = i.id
      ORDER BY i.ord;
      INSERT INTO eventlog.devices AS d (owner, device, pushed_through)
        VALUES (v_owner, p_device, p_through)
        ON CONFLICT (owner, device) DO UPDATE
        SET pushed_through = greatest(d.pushed_through, excluded.pushed_through), last_push_at = now();
      IF (SELECT coalesce(max(e.position), 0) FROM eventlog.events e WHERE e.owner = v_owner) > v_head THEN
        PERFORM pg_notify(eventlog.channel(), '');
      END IF;
    END $$;
    COMMENT ON FUNCTION eventlog.push(uuid, bigint, jsonb) IS
      'Appends a device''s events after the owner''s last position (an ID stored before is acknowledged '
      'with its position) and sets the device''s pushed mark, in one transaction.';

    CREATE FUNCTION eventlog.pull(p_after bigint, p_limit integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      stream text, type text, schema_version integer, payload bytea, correlation_id text, causation_id text,
      origin text, recorded_at_us bigint)
    LANGUAGE sql STABLE AS $$
      SELECT e.position, e.id, e.origin_device, e.origin_sequence, e.stream, e.type, e.schema_version,
        e.payload, e.metadata->>'correlationID', e.metadata->>'causationID', e.metadata->>'origin',
        round(extract(epoch FROM e.recorded_at) * 1000000)::bigint
      FROM eventlog.events e
      -- Positions are gap-free: the page is exactly this range, however the planner scans it
      -- (without statistics, right after a large push, it sorted all the rest of the log).
      WHERE e.owner = eventlog.current_owner() AND e.position > p_after
        AND e.position <= p_after + greatest(1, least(p_limit, 10000))
      ORDER BY e.position
    $$;
    COMMENT ON FUNCTION eventlog.pull(bigint, integer) IS
      'The owner''s events after a position, in position order.';

    CREATE FUNCTION eventlog.device_mark(p_device uuid) RETURNS bigint LANGUAGE sql STABLE AS $$
      SELECT coalesce(
        (SELECT d.pushed_through FROM eventlog.devices d
         WHERE d.owner = eventlog.current_owner() AND d.device = p_device), 0)
    $$;
    CREATE FUNCTION eventlog.head() RETURNS bigint LANGUAGE sql STABLE AS $$
      SELECT coalesce(max(e.position), 0) FROM eventlog.events e WHERE e.owner = eventlog.current_owner()
    $$;
    CREATE FUNCTION eventlog.channel() RETURNS text LANGUAGE sql STABLE AS $$
      SELECT 'eventlog_' || md5(eventlog.current_owner())
    $$;
    COMMENT ON FUNCTION eventlog.channel() IS
      'The NOTIFY channel on which a push announces new events of the session''s owner.';

    REVOKE ALL ON ALL TABLES IN SCHEMA eventlog FROM PUBLIC;
    GRANT USAGE ON SCHEMA eventlog TO PUBLIC;
    GRANT SELECT ON eventlog.schema_info TO PUBLIC;
    GRANT SELECT, INSERT ON eventlog.events TO PUBLIC;
    GRANT SELECT, INSERT, UPDATE ON eventlog.devices TO PUBLIC;
    """

  /// Version 2: `push` looks up the batch's known IDs one by one (the same arguments, results and
  /// behaviour; version 1's lookup could scan the owner's whole log on every batch), and
  /// `schema_info.clients_from`, the oldest client schema that may use the server (1: a client of
  /// version 1 calls the same functions).
  static let version2 = """
    CREATE OR REPLACE FUNCTION eventlog.push(p_device uuid, p_through bigint, p_events jsonb)
    RETURNS TABLE (event_id uuid, event_position bigint, already_stored boolean)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_owner text := eventlog.current_owner();
      v_head bigint;
    BEGIN
      IF jsonb_typeof(p_events) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_events must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      -- Pushes of one owner take turns from here to their commit: positions commit in order.
      PERFORM pg_advisory_xact_lock(\(lockClass), hashtext(v_owner));
      SELECT coalesce(max(e.position), 0) INTO v_head FROM eventlog.events e WHERE e.owner = v_owner;
      RETURN QUERY
      WITH input AS (
        SELECT (x.value->>'id')::uuid AS id, (x.value->>'seq')::bigint AS seq, x.value->>'stream' AS stream,
          x.value->>'type' AS type, (x.value->>'schemaVersion')::integer AS schema_version,
          decode(x.value->>'payload', 'base64') AS payload,
          coalesce(x.value->'metadata', '{}'::jsonb) AS metadata,
          (x.value->>'recordedAt')::bigint AS recorded_us, x.ordinality AS ord
        FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(value, ordinality)
      ),
      -- Each ID looked up on its own, fenced (OFFSET 0) so that the planner cannot turn the
      -- lookups back into a scan of the owner's rows. Version 1's `e.owner = v_owner AND e.id IN
      -- (SELECT …)` did exactly that with the plan PL/pgSQL kept from a small table: every batch
      -- read the owner's whole log, and a first push of a large outbox was quadratic
      -- (Docs/Benchmarks.md, finding 6).
      known AS (
        SELECT DISTINCT k.id, k.position FROM input i CROSS JOIN LATERAL (
          SELECT e.id, e.position FROM eventlog.events e
          WHERE e.id = i.id AND e.owner = v_owner OFFSET 0
        ) k
      ),
      fresh AS (
        SELECT i.*, row_number() OVER (ORDER BY i.ord) AS n FROM input i
        WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.id = i.id)
      ),
      inserted AS (
        INSERT INTO eventlog.events AS ev
          (owner, position, id, origin_device, origin_sequence, stream, type, schema_version, payload,
           metadata, recorded_at)
        SELECT v_owner, v_head + f.n, f.id, p_device, f.seq, f.stream, f.type, f.schema_version, f.payload,
          f.metadata, timestamptz 'epoch' + f.recorded_us * interval '1 microsecond'
        FROM fresh f ORDER BY f.n
        RETURNING ev.id, ev.position
      )
      SELECT i.id, coalesce(ins.position, k.position), k.position IS NOT NULL
      FROM input i LEFT JOIN inserted ins ON ins.id = i.id LEFT JOIN known k ON k.id = i.id
      ORDER BY i.ord;
      INSERT INTO eventlog.devices AS d (owner, device, pushed_through)
        VALUES (v_owner, p_device, p_through)
        ON CONFLICT (owner, device) DO UPDATE
        SET pushed_through = greatest(d.pushed_through, excluded.pushed_through), last_push_at = now();
      IF (SELECT coalesce(max(e.position), 0) FROM eventlog.events e WHERE e.owner = v_owner) > v_head THEN
        PERFORM pg_notify(eventlog.channel(), '');
      END IF;
    END $$;
    ALTER TABLE eventlog.schema_info ADD COLUMN clients_from integer NOT NULL DEFAULT 1;
    COMMENT ON COLUMN eventlog.schema_info.clients_from IS
      'The oldest client schema version that may use this server.';
    """

  /// What `remote init` did.
  public struct InitReport: Sendable, Hashable {
    /// The schema version before.
    public var from: Int
    /// The schema version after.
    public var to: Int
    /// Whether the API side for Supabase was set up (API mode: owners are `auth.uid()`).
    public var api: Bool
    /// What the database's owner should know (a `public` schema every role may write to).
    public var warnings: [String]
    /// The stream-name prefixes the server accepts now, in order (empty: every stream).
    public var replicatedStreams: [String]
  }

  /// Creates the schema, or upgrades it to ``latestVersion``, and sets who may call it, in one
  /// transaction; the migrations are a no-op when it is current.
  /// - Parameters:
  ///   - connection: a connection as a role that may create schemas in the database.
  ///   - migrations: the migrations to apply (tests give their own).
  ///   - replicatedStreamPrefixes: the stream-name prefixes the app replicates, added to those
  ///     the server accepts (none is removed: apps that share a server each add theirs); the server
  ///     refuses events on streams no prefix starts. `nil` or empty adds none.
  /// - Returns: the versions before and after, the mode, warnings, and the prefixes the server
  ///   accepts now.
  /// - Throws: ``InitError`` for a schema newer than this build's or a nonsensical version;
  ///   ``PostgresError`` when the server refuses (missing privileges: run it as the owner).
  @discardableResult
  public static func initialize(
    on connection: PostgresConnection, migrations: [String] = migrations,
    replicatedStreamPrefixes: [String]? = nil
  ) throws -> InitReport {
    let purpose = "create or upgrade the eventlog schema"
    try connection.execute("BEGIN", purpose: purpose)
    do {
      try connection.execute(
        """
        CREATE SCHEMA IF NOT EXISTS eventlog;
        CREATE TABLE IF NOT EXISTS eventlog.schema_info (
          singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
          version integer NOT NULL
        );
        LOCK TABLE eventlog.schema_info IN EXCLUSIVE MODE;
        """, purpose: "create the eventlog schema")
      let rows = try connection.query(
        "SELECT version FROM eventlog.schema_info", purpose: "read the eventlog schema version")
      let found = rows.isEmpty ? 0 : try rows.integer(0, "version", as: Int64.self)
      guard found >= 0 else { throw InitError.invalidVersion(found: found) }
      guard found <= migrations.count else {
        throw InitError.newerSchema(found: Int(found), supported: migrations.count)
      }
      let from = Int(found)
      for version in (from + 1)..<(migrations.count + 1) {
        try connection.execute(migrations[version - 1], purpose: "apply eventlog schema version \(version)")
      }
      if from < migrations.count {
        try connection.query(
          """
          INSERT INTO eventlog.schema_info (singleton, version) VALUES (true, $1)
          ON CONFLICT (singleton) DO UPDATE SET version = excluded.version
          """, [.integer(migrations.count)], purpose: "record the eventlog schema version")
      }
      var api = false
      var warnings: [String] = []
      var streams: [String] = []
      if migrations.count >= 3 {
        api =
          try connection.query(detectAPI, purpose: "look for Supabase's auth schema").string(0, "api") == "t"
        try connection.execute(
          accessScript(api: api, version: migrations.count), purpose: "grant the eventlog functions")
        try addReplicatedStreams(replicatedStreamPrefixes ?? [], on: connection)
        streams = try replicatedStreams(on: connection)
        if try connection.query(publicIsWritable, purpose: "check the schema public").string(0, "writable")
          == "t"
        {
          warnings.append(
            "every role may create objects in the schema 'public' of this database: eventlog's functions pin "
              + "their search_path, but other code may not; consider 'REVOKE CREATE ON SCHEMA public FROM PUBLIC'"
          )
        }
      }
      try connection.execute("COMMIT", purpose: purpose)
      return InitReport(
        from: from, to: migrations.count, api: api, warnings: warnings, replicatedStreams: streams)
    } catch {
      try? connection.execute("ROLLBACK", purpose: "roll back: \(purpose)")
      throw error
    }
  }

  /// Why `remote init` refused.
  public enum InitError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The server's schema is newer than this build's.
    case newerSchema(found: Int, supported: Int)
    /// The server records a version no build ever wrote (below 0).
    case invalidVersion(found: Int64)

    /// The description: `LocalizedError`'s text is the same sentence.
    public var errorDescription: String? { description }

    /// What was refused, and what to do: upgrade eventlog.
    public var description: String {
      switch self {
      case .newerSchema(let found, let supported):
        "the server has eventlog schema version \(found), newer than this build's \(supported): upgrade eventlog; nothing was changed"
      case .invalidVersion(let found):
        "the server records eventlog schema version \(found), which no build writes: eventlog.schema_info was changed by hand; nothing was changed"
      }
    }
  }
}
