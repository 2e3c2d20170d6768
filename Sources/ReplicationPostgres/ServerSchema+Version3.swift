extension ServerSchema {
  /// Version 3: the functions are the only way in, each owner's rows are reachable only by that
  /// owner, and the log is readable by SQL (`Docs/Replication.md`, "Threat model" and "The server
  /// schema").
  ///
  /// - **No table privileges** for client roles: the tables are written and read only by the
  ///   `SECURITY DEFINER` functions of `eventlog` (owned by the role that ran `remote init`, with
  ///   a pinned, empty `search_path`), which derive the owner themselves
  ///   (``ownerFunction(api:)``); `eventlog_api` holds the functions a device calls
  ///   (`SECURITY INVOKER`, empty `search_path`, each with its own `statement_timeout` and
  ///   `lock_timeout`), which Supabase's API exposes. Nobody but the definer can `LOCK` a table
  ///   or read `pg_stats` of one.
  /// - **Owners keyed on what survives a rename**: `role:<oid>` for a database role,
  ///   `user:<uuid>` for a Supabase Auth user (`auth.uid()` of the `authenticated` role).
  ///   Existing rows move from the role's name to its OID.
  /// - **Appends take turns on the owner's row** of `eventlog.owners` (`SELECT … FOR UPDATE`),
  ///   which only the functions can lock: no advisory lock another role can take.
  /// - **Every column a client supplies is bounded** and checked by `push` event by event: a
  ///   malformed event is refused on its own (`outcome` `refused`, with the reason), never the
  ///   batch; the same ID with other content is a `conflict`; another owner's ID is `refused`.
  ///   Pull never fails on a row: conversions that could (a time out of range) answer `NULL`.
  /// - **Device marks belong to a device key**: a mark is kept per (owner, device, SHA-256 of the
  ///   device's secret key), so another device of the owner cannot move it, and it records the
  ///   last event it acknowledges so that the device can check it.
  /// - **Pages bounded by bytes** as well as count; a pull names the event it expects at its
  ///   cursor, and the server refuses (SQLSTATE `EL001`) when it holds another or none.
  /// - **A notification channel nobody else can derive** (a random key per owner).
  /// - **Payloads and metadata are `jsonb`** in `export`'s JSON form (existing binary payloads
  ///   become `{"$binary": "<base64>"}`), so `payload->>'customerName'` reads a field.
  /// - **Only replicated streams**: `eventlog.replicated_streams` holds the stream-name prefixes
  ///   the apps replicate (each app's `remote init` adds its own); when it is not empty, an event
  ///   on a stream none of them starts is refused.
  ///
  /// Clients of versions 1 and 2 call functions that no longer exist: `clients_from` is 3.
  /// SQL that is true when the text `expression` is a UUID in its 8-4-4-4-12 form: 36 bytes of hex
  /// digits and dashes, the dashes in their places. Written out in place, not as a function (a
  /// SQL function with a pinned `search_path` is never inlined), and cheaper than one regular
  /// expression of the whole form, whose bounded repetitions cost about 4 µs a call: the checks
  /// of every field of every pushed event were most of a push's server time
  /// (Benchmarks/Results/FINDINGS.md, finding 10).
  static func isUUID(_ expression: String) -> String {
    """
    (pg_catalog.octet_length(\(expression)) = 36 AND \(expression) !~ '[^-0-9a-fA-F]'
      AND pg_catalog.substr(\(expression), 9, 1) = '-' AND pg_catalog.substr(\(expression), 14, 1) = '-'
      AND pg_catalog.substr(\(expression), 19, 1) = '-' AND pg_catalog.substr(\(expression), 24, 1) = '-')
    """
  }

  /// SQL that is true when the `jsonb` `expression` is absent or a string holding a UUID.
  static func isUUIDOrAbsent(_ expression: String) -> String {
    "(\(expression) IS NULL OR (pg_catalog.jsonb_typeof(\(expression)) = 'string' AND "
      + isUUID("(\(expression) #>> '{}')") + "))"
  }

  /// SQL that is true when the text `expression` holds a control character (U+0001–U+001F, U+007F;
  /// text never holds U+0000). A one-class regular expression: `translate` with the 32 characters
  /// cost 25 times as much.
  static func hasControl(_ expression: String) -> String {
    "(\(expression) ~ '[\\x01-\\x1f\\x7f]')"
  }

  static let version3 = #"""
    CREATE SCHEMA eventlog_api;
    COMMENT ON SCHEMA eventlog_api IS
      'The functions a device calls, over libpq or Supabase''s API (add it to the exposed schemas).';

    -- Row-level security stays for any role granted a table later; the functions' owner (the
    -- tables' owner) reads across owners only to refuse an ID another owner holds, and moves the
    -- owners below.
    ALTER TABLE eventlog.events NO FORCE ROW LEVEL SECURITY;

    -- Owners: from role names to what survives a rename.
    ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
    UPDATE eventlog.events e SET owner = coalesce('role:' || r.oid::text, 'dropped-role:' || o.owner)
      FROM (SELECT DISTINCT owner FROM eventlog.events) o
      LEFT JOIN pg_catalog.pg_roles r ON r.rolname = o.owner
      WHERE e.owner = o.owner;
    ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;

    -- Payloads as jsonb: a binary payload becomes {"$binary": base64}.
    ALTER TABLE eventlog.events DROP CONSTRAINT events_payload_check;
    ALTER TABLE eventlog.events ALTER COLUMN payload TYPE jsonb
      USING pg_catalog.jsonb_build_object('$binary', pg_catalog.translate(pg_catalog.encode(payload, 'base64'), E'\n', ''));
    ALTER TABLE eventlog.events DROP CONSTRAINT events_metadata_check;
    ALTER TABLE eventlog.events ALTER COLUMN owner DROP DEFAULT;
    -- The bounds push keeps, for rows written from now on (older rows are not re-checked: pull
    -- copes with any row).
    ALTER TABLE eventlog.events ADD CONSTRAINT events_bounded CHECK (
      pg_catalog.isfinite(recorded_at)
      AND recorded_at >= '0001-01-01 00:00:00+00' AND recorded_at < '10000-01-01 00:00:00+00'
      AND pg_catalog.jsonb_typeof(payload) = 'object'
      AND pg_catalog.pg_column_size(payload) <= 4194304
      AND pg_catalog.jsonb_typeof(metadata) = 'object'
      AND pg_catalog.pg_column_size(metadata) <= 2048
      AND stream !~ '[[:cntrl:]]' AND type !~ '[[:cntrl:]]'
    ) NOT VALID;

    CREATE TABLE eventlog.owners (
      owner text PRIMARY KEY,
      channel_key uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
      created_at timestamptz NOT NULL DEFAULT pg_catalog.now()
    );
    COMMENT ON TABLE eventlog.owners IS
      'One row per owner: pushes of an owner take turns on it; its key makes the notification channel.';
    INSERT INTO eventlog.owners (owner) SELECT DISTINCT owner FROM eventlog.events;

    -- Marks per device key (version 2's marks, which anyone of the owner could set, are dropped:
    -- a device re-pushes from the start once, and the server acknowledges what it holds).
    DROP FUNCTION eventlog.push(uuid, bigint, jsonb);
    DROP FUNCTION eventlog.pull(bigint, integer);
    DROP FUNCTION eventlog.device_mark(uuid);
    DROP FUNCTION eventlog.head();
    DROP FUNCTION eventlog.channel();
    DROP TABLE eventlog.devices;
    CREATE TABLE eventlog.device_marks (
      owner text NOT NULL,
      device uuid NOT NULL,
      key_hash bytea NOT NULL CHECK (pg_catalog.octet_length(key_hash) = 32),
      pushed_through bigint NOT NULL DEFAULT 0 CHECK (pushed_through >= 0),
      last_sequence bigint CHECK (last_sequence > 0),
      last_id uuid,
      updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
      CONSTRAINT device_marks_pkey PRIMARY KEY (owner, device, key_hash)
    );
    COMMENT ON TABLE eventlog.device_marks IS
      'Each device''s pushed mark, per device key: the last local sequence the server holds, and the last event it acknowledged.';

    CREATE TABLE eventlog.replicated_streams (
      prefix text PRIMARY KEY CHECK (prefix <> '' AND pg_catalog.octet_length(prefix) <= 400)
    );
    COMMENT ON TABLE eventlog.replicated_streams IS
      'The stream-name prefixes the app replicates (set by remote init); empty: every stream.';

    -- Triggers: a pinned search_path, and no advisory lock (appends take turns on eventlog.owners).
    CREATE OR REPLACE FUNCTION eventlog.refuse_change() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
    BEGIN
      RAISE EXCEPTION 'eventlog.events is append-only: % is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'An event is never changed or removed; append a new event instead.';
    END $$;
    CREATE OR REPLACE FUNCTION eventlog.check_positions() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
    DECLARE
      r record;
      previous bigint;
    BEGIN
      FOR r IN
        SELECT n.owner, min(n.position) AS first, max(n.position) AS last, count(*) AS total
        FROM new_events n GROUP BY n.owner
      LOOP
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

    DROP POLICY events_read_own ON eventlog.events;
    DROP POLICY events_append_own ON eventlog.events;
    CREATE POLICY events_read_own ON eventlog.events FOR SELECT
      USING (owner = (SELECT eventlog.current_owner()));
    ALTER TABLE eventlog.owners ENABLE ROW LEVEL SECURITY;
    CREATE POLICY owners_own ON eventlog.owners FOR SELECT USING (owner = (SELECT eventlog.current_owner()));
    ALTER TABLE eventlog.device_marks ENABLE ROW LEVEL SECURITY;
    CREATE POLICY device_marks_own ON eventlog.device_marks FOR SELECT
      USING (owner = (SELECT eventlog.current_owner()));
    ALTER TABLE eventlog.replicated_streams ENABLE ROW LEVEL SECURITY;

    -- The owner's turn: its row, locked until the transaction ends.
    CREATE FUNCTION eventlog.lock_owner(p_owner text) RETURNS uuid
    LANGUAGE plpgsql SET search_path = '' AS $$
    DECLARE
      v_key uuid;
    BEGIN
      INSERT INTO eventlog.owners (owner) VALUES (p_owner) ON CONFLICT (owner) DO NOTHING;
      SELECT o.channel_key INTO v_key FROM eventlog.owners o WHERE o.owner = p_owner FOR UPDATE;
      RETURN v_key;
    END $$;

    CREATE FUNCTION eventlog.owner_head(p_owner text) RETURNS bigint
    LANGUAGE sql STABLE SET search_path = '' AS $$
      SELECT coalesce(max(e.position), 0) FROM eventlog.events e WHERE e.owner = p_owner
    $$;

    CREATE FUNCTION eventlog.owner_channel(p_owner text) RETURNS text
    LANGUAGE sql STABLE SET search_path = '' AS $$
      SELECT 'eventlog_' || pg_catalog.md5(p_owner || ':' || o.channel_key::text)
      FROM eventlog.owners o WHERE o.owner = p_owner
    $$;

    -- push: every event checked on its own; one transaction for the batch and the device's mark.
    CREATE FUNCTION eventlog.push_events(p_device uuid, p_device_key text, p_through bigint, p_events jsonb)
    RETURNS TABLE (event_id uuid, event_position bigint, outcome text, reason text)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' SET lock_timeout = '10s' AS $$
    DECLARE
      v_owner text := eventlog.current_owner();
      v_head bigint;
      v_row record;
      v_last_sequence bigint;
      v_last_id uuid;
      v_prefixes text[];
    BEGIN
      IF p_device IS NULL THEN
        RAISE EXCEPTION 'p_device is required' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF p_device_key IS NULL OR pg_catalog.length(p_device_key) NOT BETWEEN 32 AND 200 THEN
        RAISE EXCEPTION 'p_device_key must have 32 to 200 characters' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF p_through IS NULL OR p_through < 0 THEN
        RAISE EXCEPTION 'p_through must be 0 or more' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF pg_catalog.jsonb_typeof(p_events) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_events must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF pg_catalog.jsonb_array_length(p_events) > 1000 THEN
        RAISE EXCEPTION 'a push holds at most 1000 events' USING ERRCODE = 'program_limit_exceeded';
      END IF;
      IF pg_catalog.octet_length(p_events::text) > 33554432 THEN
        RAISE EXCEPTION 'a push holds at most 32 MiB' USING ERRCODE = 'program_limit_exceeded';
      END IF;
      -- Pushes of one owner take turns from here to their commit: positions commit in order.
      PERFORM eventlog.lock_owner(v_owner);
      v_head := eventlog.owner_head(v_owner);
      SELECT pg_catalog.array_agg(s.prefix) INTO v_prefixes FROM eventlog.replicated_streams s;
      FOR v_row IN
      WITH raw AS (
        SELECT x.value AS v, x.ordinality AS ord
        FROM pg_catalog.jsonb_array_elements(p_events) WITH ORDINALITY AS x(value, ordinality)
      ),
      -- Each field read once, by its JSON type and a cast that cannot fail (a JSON number to
      -- numeric, checked whole and in range before it becomes an integer), not by a regular
      -- expression per field: the checks were most of a push's server time (Docs/Benchmarks.md).
      fields AS MATERIALIZED (
        SELECT r.ord, r.v,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'id') = 'string' THEN r.v->>'id' END AS id_text,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'seq') = 'number' THEN (r.v->'seq')::numeric END AS seq_number,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'stream') = 'string' THEN r.v->>'stream' END AS stream,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'type') = 'string' THEN r.v->>'type' END AS type,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'schemaVersion') = 'number'
            THEN (r.v->'schemaVersion')::numeric END AS version_number,
          r.v->'payload' AS payload,
          coalesce(r.v->'metadata', '{}'::jsonb) AS metadata,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'recordedAt') = 'number'
            THEN (r.v->'recordedAt')::numeric END AS recorded_number
        FROM raw r
      ),
      typed AS MATERIALIZED (
        SELECT f.ord, f.v, f.stream, f.type, f.payload, f.metadata,
          CASE WHEN \#(isUUID("f.id_text")) THEN f.id_text::uuid END AS id,
          CASE WHEN f.seq_number = pg_catalog.trunc(f.seq_number) AND f.seq_number BETWEEN 1 AND 9223372036854775807
            THEN f.seq_number::bigint END AS seq,
          CASE WHEN f.version_number = pg_catalog.trunc(f.version_number) AND f.version_number BETWEEN 0 AND 65535
            THEN f.version_number::integer END AS schema_version,
          CASE WHEN f.recorded_number = pg_catalog.trunc(f.recorded_number)
            AND f.recorded_number BETWEEN -62135596800000000 AND 253402300799999999
            THEN f.recorded_number::bigint END AS recorded_us
        FROM fields f
      ),
      checked AS (
        SELECT t.*,
          CASE
            WHEN pg_catalog.jsonb_typeof(t.v) IS DISTINCT FROM 'object' THEN 'an event must be a JSON object'
            WHEN t.id IS NULL THEN 'the event has no valid "id" (a UUID)'
            WHEN t.seq IS NULL THEN 'the event has no valid "seq" (a local sequence, 1 or more)'
            WHEN t.stream IS NULL OR t.stream = '' OR pg_catalog.octet_length(t.stream) > 400
              OR \#(hasControl("t.stream")) THEN 'the event has no valid "stream" (1 to 400 bytes, no control characters)'
            WHEN v_prefixes IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM pg_catalog.unnest(v_prefixes) p WHERE pg_catalog.starts_with(t.stream, p))
              THEN 'the stream ''' || pg_catalog.left(t.stream, 100) || ''' is not replicated on this server'
            WHEN t.type IS NULL OR t.type = '' OR pg_catalog.octet_length(t.type) > 255 OR \#(hasControl("t.type"))
              THEN 'the event has no valid "type" (1 to 255 bytes, no control characters)'
            WHEN t.schema_version IS NULL THEN 'the event has no valid "schemaVersion" (0 to 65535)'
            WHEN pg_catalog.jsonb_typeof(t.payload) IS DISTINCT FROM 'object' THEN 'the event''s "payload" must be a JSON object'
            WHEN pg_catalog.pg_column_size(t.payload) > 4194304 THEN 'the event''s payload is over 4 MiB'
            WHEN pg_catalog.jsonb_typeof(t.metadata) IS DISTINCT FROM 'object'
              OR pg_catalog.pg_column_size(t.metadata) > 2048
              OR (t.metadata - ARRAY['correlationID', 'causationID', 'origin']) <> '{}'::jsonb
              OR pg_catalog.jsonb_typeof(t.metadata->'origin') IS DISTINCT FROM 'string'
              OR NOT \#(isUUIDOrAbsent("t.metadata->'correlationID'"))
              OR NOT \#(isUUIDOrAbsent("t.metadata->'causationID'"))
              OR pg_catalog.octet_length(t.metadata->>'origin') > 1000
              THEN 'the event''s "metadata" must be {"origin": text of at most 1000 bytes, "correlationID"?, "causationID"?: UUIDs}'
            WHEN t.recorded_us IS NULL THEN 'the event has no valid "recordedAt" (microseconds since 1970, years 1 to 9999)'
            WHEN pg_catalog.row_number() OVER (PARTITION BY t.id ORDER BY t.ord) > 1 THEN 'the event is repeated in the batch'
          END AS problem
        FROM typed t
      ),
      -- Each ID looked up on its own, fenced (OFFSET 0) so that the planner cannot turn the
      -- lookups into a scan of the log (version 2's lesson, Docs/Benchmarks.md finding 6).
      known AS (
        SELECT c.ord, k.owner, k.position,
          (k.stream = c.stream AND k.type = c.type AND k.schema_version = c.schema_version
            -- A payload kept as {"$binary": …} (an upgraded server's, or from a device that had no
            -- JSON form for it) is not compared with a JSON one.
            AND (k.payload = c.payload OR (k.payload ? '$binary') <> (c.payload ? '$binary'))
            AND k.metadata = c.metadata
            AND k.recorded_at = pg_catalog.to_timestamp(0) + c.recorded_us * interval '1 microsecond') AS same
        FROM checked c CROSS JOIN LATERAL (
          SELECT e.owner, e.position, e.stream, e.type, e.schema_version, e.payload, e.metadata, e.recorded_at
          FROM eventlog.events e WHERE e.id = c.id OFFSET 0
        ) k
        WHERE c.problem IS NULL
      ),
      fresh AS (
        SELECT c.*, pg_catalog.row_number() OVER (ORDER BY c.ord) AS n FROM checked c
        WHERE c.problem IS NULL AND NOT EXISTS (SELECT 1 FROM known k WHERE k.ord = c.ord)
      ),
      inserted AS (
        INSERT INTO eventlog.events AS ev
          (owner, position, id, origin_device, origin_sequence, stream, type, schema_version, payload,
           metadata, recorded_at)
        SELECT v_owner, v_head + f.n, f.id, p_device, f.seq, f.stream, f.type, f.schema_version, f.payload,
          f.metadata, pg_catalog.to_timestamp(0) + f.recorded_us * interval '1 microsecond'
        FROM fresh f ORDER BY f.n
        RETURNING ev.id, ev.position
      )
      SELECT c.id, c.seq,
        CASE WHEN ins.position IS NOT NULL THEN ins.position
             WHEN k.owner = v_owner THEN k.position END AS at_position,
        CASE WHEN c.problem IS NOT NULL THEN 'refused'
             WHEN ins.position IS NOT NULL THEN 'stored'
             WHEN k.owner <> v_owner THEN 'refused'
             WHEN k.same THEN 'already_stored'
             ELSE 'conflict' END AS verdict,
        CASE WHEN c.problem IS NOT NULL THEN c.problem
             WHEN ins.position IS NOT NULL THEN NULL
             WHEN k.owner <> v_owner THEN 'the event ID is taken'
             WHEN k.same THEN NULL
             ELSE 'the server holds other content under this event ID, at position ' || k.position END AS why
      FROM checked c
      LEFT JOIN inserted ins ON ins.id = c.id AND c.problem IS NULL
      LEFT JOIN known k ON k.ord = c.ord
      ORDER BY c.ord
      LOOP
        event_id := v_row.id;
        event_position := v_row.at_position;
        outcome := v_row.verdict;
        reason := v_row.why;
        RETURN NEXT;
        -- The last event of the batch the server holds, for the device to check its mark by.
        IF v_row.verdict IN ('stored', 'already_stored')
          AND (v_last_sequence IS NULL OR v_row.seq > v_last_sequence) THEN
          v_last_sequence := v_row.seq;
          v_last_id := v_row.id;
        END IF;
      END LOOP;
      INSERT INTO eventlog.device_marks AS d (owner, device, key_hash, pushed_through, last_sequence, last_id)
        VALUES (v_owner, p_device, pg_catalog.sha256(pg_catalog.convert_to(p_device_key, 'UTF8')), p_through,
          v_last_sequence, v_last_id)
        ON CONFLICT (owner, device, key_hash) DO UPDATE
        SET pushed_through = excluded.pushed_through,
          last_sequence = coalesce(excluded.last_sequence, d.last_sequence),
          last_id = CASE WHEN excluded.last_sequence IS NULL THEN d.last_id ELSE excluded.last_id END,
          updated_at = pg_catalog.now();
      IF eventlog.owner_head(v_owner) > v_head THEN
        PERFORM pg_catalog.pg_notify(eventlog.owner_channel(v_owner), '');
      END IF;
    END $$;

    -- pull: the owner's events after a position, bounded by count and bytes; never fails on a row.
    CREATE FUNCTION eventlog.pull_events(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      stream text, type text, schema_version integer, payload text, correlation_id text, causation_id text,
      origin text, recorded_at_us bigint)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    DECLARE
      v_owner text := eventlog.current_owner();
      v_limit integer := greatest(1, least(coalesce(p_limit, 1000), 10000));
      v_max_bytes bigint := greatest(1024, least(coalesce(p_max_bytes, 8388608), 16777216));
      v_until timestamptz := pg_catalog.clock_timestamp()
        + greatest(0, least(coalesce(p_wait_ms, 0), 10000)) * interval '1 millisecond';
      v_head bigint;
      v_id uuid;
    BEGIN
      IF p_after IS NULL OR p_after < 0 THEN
        RAISE EXCEPTION 'p_after must be 0 or more' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      LOOP
        v_head := eventlog.owner_head(v_owner);
        IF p_after > v_head THEN
          RAISE EXCEPTION 'the server holds % events of this owner, but the device has pulled %', v_head, p_after
            USING ERRCODE = 'EL002', HINT = 'The server lost events (restored from an older backup?).';
        END IF;
        IF p_after > 0 AND p_after_id IS NOT NULL THEN
          SELECT e.id INTO v_id FROM eventlog.events e WHERE e.owner = v_owner AND e.position = p_after;
          IF v_id IS DISTINCT FROM p_after_id THEN
            RAISE EXCEPTION 'the server holds event % at position %, not the % the device pulled there',
              coalesce(v_id::text, 'none'), p_after, p_after_id
              USING ERRCODE = 'EL001', HINT = 'The server''s log changed under the device (restored from an older backup?).';
          END IF;
        END IF;
        EXIT WHEN v_head > p_after OR pg_catalog.clock_timestamp() >= v_until;
        PERFORM pg_catalog.pg_sleep(0.1);
      END LOOP;
      RETURN QUERY
      SELECT s.position, s.id, s.origin_device, s.origin_sequence, s.stream, s.type, s.schema_version,
        s.payload_text, s.metadata->>'correlationID', s.metadata->>'causationID', s.metadata->>'origin',
        CASE WHEN pg_catalog.isfinite(s.recorded_at) AND s.recorded_at >= '0001-01-01 00:00:00+00'
          AND s.recorded_at < '10000-01-01 00:00:00+00'
          THEN (EXTRACT(epoch FROM s.recorded_at) * 1000000)::bigint END
      FROM (
        SELECT e.*, e.payload::text AS payload_text,
          sum(pg_catalog.octet_length(e.payload::text)) OVER (ORDER BY e.position) AS running
        FROM eventlog.events e
        -- Positions are gap-free: the page is exactly this range, however the planner scans it.
        WHERE e.owner = v_owner AND e.position > p_after AND e.position <= p_after + v_limit
      ) s
      WHERE s.running - pg_catalog.octet_length(s.payload_text) < v_max_bytes
      ORDER BY s.position;
    END $$;

    CREATE FUNCTION eventlog.device_mark_of(p_device uuid, p_device_key text)
    RETURNS TABLE (pushed_through bigint, last_sequence bigint, last_id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
      SELECT coalesce(d.pushed_through, 0), d.last_sequence, d.last_id
      FROM (SELECT 1) one LEFT JOIN eventlog.device_marks d
        ON d.owner = eventlog.current_owner() AND d.device = p_device
        AND d.key_hash = pg_catalog.sha256(pg_catalog.convert_to(coalesce(p_device_key, ''), 'UTF8'))
    $$;

    CREATE FUNCTION eventlog.head_of_owner() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
      SELECT eventlog.owner_head(eventlog.current_owner())
    $$;

    CREATE FUNCTION eventlog.channel_of_owner() RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    DECLARE
      v_owner text := eventlog.current_owner();
    BEGIN
      INSERT INTO eventlog.owners (owner) VALUES (v_owner) ON CONFLICT (owner) DO NOTHING;
      RETURN eventlog.owner_channel(v_owner);
    END $$;

    CREATE FUNCTION eventlog.server_info_of_owner()
    RETURNS TABLE (schema_version integer, clients_from integer, owner text, owner_head bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
      SELECT s.version, s.clients_from, eventlog.current_owner(), eventlog.owner_head(eventlog.current_owner())
      FROM eventlog.schema_info s
    $$;

    -- What a device calls: thin SECURITY INVOKER wrappers with an empty search_path and their own
    -- timeouts (PostgREST applies a function's statement_timeout to its transaction).
    CREATE FUNCTION eventlog_api.push(p_device uuid, p_device_key text, p_through bigint, p_events jsonb)
    RETURNS TABLE (event_id uuid, event_position bigint, outcome text, reason text)
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '30s' SET lock_timeout = '10s' AS $$
      SELECT * FROM eventlog.push_events(p_device, p_device_key, p_through, p_events)
    $$;
    COMMENT ON FUNCTION eventlog_api.push(uuid, text, bigint, jsonb) IS
      'Appends a device''s events after the owner''s last position, each checked on its own, and sets the device''s mark.';
    CREATE FUNCTION eventlog_api.pull(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      stream text, type text, schema_version integer, payload text, correlation_id text, causation_id text,
      origin text, recorded_at_us bigint)
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '30s' AS $$
      SELECT * FROM eventlog.pull_events(p_after, p_after_id, p_limit, p_max_bytes, p_wait_ms)
    $$;
    COMMENT ON FUNCTION eventlog_api.pull(bigint, uuid, integer, integer, integer) IS
      'The owner''s events after a position (checked against the event the device holds there), in position order.';
    CREATE FUNCTION eventlog_api.device_mark(p_device uuid, p_device_key text)
    RETURNS TABLE (pushed_through bigint, last_sequence bigint, last_id uuid)
    LANGUAGE sql STABLE SET search_path = '' SET statement_timeout = '10s' AS $$
      SELECT * FROM eventlog.device_mark_of(p_device, p_device_key)
    $$;
    CREATE FUNCTION eventlog_api.head() RETURNS bigint
    LANGUAGE sql STABLE SET search_path = '' SET statement_timeout = '10s' AS $$
      SELECT eventlog.head_of_owner()
    $$;
    CREATE FUNCTION eventlog_api.channel() RETURNS text
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '10s' AS $$
      SELECT eventlog.channel_of_owner()
    $$;
    CREATE FUNCTION eventlog_api.server_info()
    RETURNS TABLE (schema_version integer, clients_from integer, owner text, owner_head bigint)
    LANGUAGE sql STABLE SET search_path = '' SET statement_timeout = '10s' AS $$
      SELECT * FROM eventlog.server_info_of_owner()
    $$;

    UPDATE eventlog.schema_info SET clients_from = 3;
    """#
}
