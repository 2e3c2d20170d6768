extension ServerSchema {
  /// Version 4: the server's work is bounded by what it computes, not by what it stores (issue 28,
  /// `Docs/Replication.md`, "Threat model").
  ///
  /// - **A page is budgeted by the text the server sends.** A `jsonb` payload is stored as
  ///   binary, and a pull sends its text: `1e131000` takes a few bytes stored and 131 KB as text,
  ///   so version 3, which rendered every row of a page's range to text before its byte budget
  ///   applied, spent minutes on a page of such rows and timed out on every pull of the owner.
  ///   Each row now keeps the length of its payload's text (`payload_text_bytes`): `push` measures
  ///   it and refuses a payload over 4 MiB as text, a trigger measures a row inserted without it
  ///   (an operator's), and the upgrade measures the rows stored before. `pull` sums the stored
  ///   lengths and renders only the rows of the page.
  /// - **Numbers out of proportion are never rendered.** Before measuring, a payload is looked
  ///   through (``isMeasurable(_:)``, in time proportional to its stored size) for a number whose
  ///   text would dwarf it: a magnitude of 1e309 or more (past any `Double`), or more than 400
  ///   digits after the point (`1e-16383`, `0e-16383`). `push` refuses such a payload; a row
  ///   stored before with one keeps no length, and `pull` sends it without its payload (`NULL`),
  ///   so that every device records it by position and ID and passes it. So does a row whose text
  ///   is over the 8 MiB a device takes.
  /// - **Waits per owner are bounded.** A long poll (`p_wait_ms`) holds its request's
  ///   transaction, and so a pooled connection of Supabase's API, for up to 10 s: one user's many
  ///   polls filled the pool and every other user's requests failed. A wait now first takes one of
  ///   the owner's ``waitSlotsPerOwner`` rows of `eventlog.owner_waits`
  ///   (`SELECT … FOR UPDATE SKIP LOCKED`, a row lock released when the transaction ends, however
  ///   it ends); with none free it answers at once, and the device falls back to polling.
  ///
  /// The functions take and return what they did: `clients_from` stays 3.
  static let version4 = #"""
    ALTER TABLE eventlog.events ADD COLUMN payload_text_bytes integer;
    COMMENT ON COLUMN eventlog.events.payload_text_bytes IS
      'The bytes of payload::text, which a pull sends and budgets by; NULL when the payload holds a number whose text is out of proportion to it, which no pull renders.';

    -- The upgrade measures the rows stored before, once. The append-only trigger and the bounds
    -- (a NOT VALID constraint still holds for an UPDATE) are set aside meanwhile: rows stored
    -- before the bounds need not meet them.
    ALTER TABLE eventlog.events DROP CONSTRAINT events_bounded;
    ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
    UPDATE eventlog.events SET payload_text_bytes = \#(payloadTextBytes("payload"));
    ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
    -- The bounds push keeps, for rows written from now on (older rows are not re-checked: pull
    -- copes with any row).
    ALTER TABLE eventlog.events ADD CONSTRAINT events_bounded CHECK (
      pg_catalog.isfinite(recorded_at)
      AND recorded_at >= '0001-01-01 00:00:00+00' AND recorded_at < '10000-01-01 00:00:00+00'
      AND pg_catalog.jsonb_typeof(payload) = 'object'
      AND pg_catalog.pg_column_size(payload) <= 4194304
      AND payload_text_bytes IS NOT NULL AND payload_text_bytes <= 4194304
      AND pg_catalog.jsonb_typeof(metadata) = 'object'
      AND pg_catalog.pg_column_size(metadata) <= 2048
      AND stream !~ '[[:cntrl:]]' AND type !~ '[[:cntrl:]]'
    ) NOT VALID;

    -- A row inserted without its length (an operator's: push gives it) is measured.
    CREATE FUNCTION eventlog.measure_payload() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
    BEGIN
      NEW.payload_text_bytes := \#(payloadTextBytes("NEW.payload"));
      RETURN NEW;
    END $$;
    CREATE TRIGGER events_measure_payload BEFORE INSERT ON eventlog.events
      FOR EACH ROW WHEN (NEW.payload_text_bytes IS NULL) EXECUTE FUNCTION eventlog.measure_payload();

    -- The owners' wait slots: a long poll holds one for its transaction.
    CREATE TABLE eventlog.owner_waits (
      owner text NOT NULL,
      slot integer NOT NULL CHECK (slot BETWEEN 1 AND 64),
      CONSTRAINT owner_waits_pkey PRIMARY KEY (owner, slot)
    );
    COMMENT ON TABLE eventlog.owner_waits IS
      'A few rows per owner: a pull that waits (a long poll) locks one until its transaction ends; with none free it answers at once.';
    ALTER TABLE eventlog.owner_waits ENABLE ROW LEVEL SECURITY;
    INSERT INTO eventlog.owner_waits (owner, slot)
      SELECT o.owner, s FROM eventlog.owners o, pg_catalog.generate_series(1, \#(waitSlotsPerOwner)) s;

    -- Takes one of the owner's wait slots until the transaction ends: true, or false when the
    -- owner's other waits hold them all. An owner's first wait makes its slots (they count from
    -- its commit) and answers at once: a wait that made them would hold every later first wait
    -- of the owner on its uncommitted rows.
    CREATE FUNCTION eventlog.take_wait_slot(p_owner text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SET search_path = '' AS $$
    BEGIN
      PERFORM 1 FROM eventlog.owner_waits w WHERE w.owner = p_owner LIMIT 1 FOR UPDATE SKIP LOCKED;
      IF FOUND THEN
        RETURN true;
      END IF;
      IF NOT EXISTS (SELECT 1 FROM eventlog.owner_waits w WHERE w.owner = p_owner) THEN
        INSERT INTO eventlog.owner_waits (owner, slot)
          SELECT p_owner, s FROM pg_catalog.generate_series(1, \#(waitSlotsPerOwner)) s
          ON CONFLICT (owner, slot) DO NOTHING;
      END IF;
      RETURN false;
    END $$;

    -- push: version 3's, with the payload measured (and bounded) by its text, and the batch by
    -- its binary size (version 3 rendered the whole batch to text first).
    CREATE OR REPLACE FUNCTION eventlog.push_events(p_device uuid, p_device_key text, p_through bigint, p_events jsonb)
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
      IF pg_catalog.pg_column_size(p_events) > 33554432 THEN
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
      screened AS MATERIALIZED (
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
            WHEN NOT \#(isMeasurable("t.payload"))
              THEN 'the event''s payload holds a number whose JSON text is out of proportion to it (a magnitude of 1e309 or more, or more than 400 digits after the point)'
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
      -- Only a payload that passed every check is rendered, and only once: its text's length is
      -- what pulls budget by.
      measured AS MATERIALIZED (
        SELECT s.*,
          CASE WHEN s.problem IS NULL THEN pg_catalog.octet_length(s.payload::text) END AS text_bytes
        FROM screened s
      ),
      checked AS (
        SELECT m.ord, m.v, m.stream, m.type, m.payload, m.metadata, m.id, m.seq, m.schema_version,
          m.recorded_us, m.text_bytes,
          coalesce(m.problem,
            CASE WHEN m.text_bytes > 4194304 THEN 'the event''s payload is over 4 MiB as JSON text' END) AS problem
        FROM measured m
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
           payload_text_bytes, metadata, recorded_at)
        SELECT v_owner, v_head + f.n, f.id, p_device, f.seq, f.stream, f.type, f.schema_version, f.payload,
          f.text_bytes, f.metadata, pg_catalog.to_timestamp(0) + f.recorded_us * interval '1 microsecond'
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

    -- pull: the page budgeted by the stored text lengths, only its rows rendered; a wait holds one
    -- of the owner's wait slots.
    CREATE OR REPLACE FUNCTION eventlog.pull_events(
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
      v_waiting boolean := false;
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
        -- Waiting holds this request's connection: at most a few waits of an owner at once. With
        -- the owner's slots taken (its other long polls), the empty page goes now.
        IF NOT v_waiting THEN
          v_waiting := eventlog.take_wait_slot(v_owner);
          EXIT WHEN NOT v_waiting;
        END IF;
        PERFORM pg_catalog.pg_sleep(0.1);
      END LOOP;
      RETURN QUERY
      SELECT s.position, s.id, s.origin_device, s.origin_sequence, s.stream, s.type, s.schema_version,
        CASE WHEN s.servable THEN s.payload::text END,
        CASE WHEN pg_catalog.jsonb_typeof(s.metadata->'correlationID') = 'string'
          THEN s.metadata->>'correlationID' END,
        CASE WHEN pg_catalog.jsonb_typeof(s.metadata->'causationID') = 'string' THEN s.metadata->>'causationID' END,
        CASE WHEN pg_catalog.jsonb_typeof(s.metadata->'origin') = 'string' THEN s.metadata->>'origin' END,
        CASE WHEN pg_catalog.isfinite(s.recorded_at) AND s.recorded_at >= '0001-01-01 00:00:00+00'
          AND s.recorded_at < '10000-01-01 00:00:00+00'
          THEN (EXTRACT(epoch FROM s.recorded_at) * 1000000)::bigint END
      FROM (
        SELECT c.*, sum(c.cost) OVER (ORDER BY c.position) AS running
        FROM (
          -- A payload is sent when its text was measured and a device takes it (8 MiB): else the
          -- row goes without it, costing nothing, and the device records it and passes it.
          SELECT e.position, e.id, e.origin_device, e.origin_sequence, e.stream, e.type, e.schema_version,
            e.payload, e.metadata, e.recorded_at,
            coalesce(e.payload_text_bytes <= 8388608, false) AS servable,
            CASE WHEN e.payload_text_bytes <= 8388608 THEN e.payload_text_bytes ELSE 0 END AS cost
          FROM eventlog.events e
          -- Positions are gap-free: the page is exactly this range, however the planner scans it.
          WHERE e.owner = v_owner AND e.position > p_after AND e.position <= p_after + v_limit
        ) c
      ) s
      -- The budget counts what the rows' text will take; nothing is rendered before it applies.
      WHERE s.running - s.cost < v_max_bytes
      ORDER BY s.position;
    END $$;
    """#

  /// How many waits (long polls) of one owner the server holds at once; a later one answers at
  /// once, with what there is.
  static let waitSlotsPerOwner = 2

  /// SQL that is true when the text of the `jsonb` `expression` is in proportion to its stored
  /// size, so that rendering it costs what storing it did: it holds no number of magnitude 1e309
  /// or more, nor one with more than 400 digits after the point. A path query finds the numbers
  /// that may be such (zeros, which can carry any scale, and magnitudes past either bound) in
  /// about a microsecond for a small payload; only when it finds one are their scales read.
  static func isMeasurable(_ expression: String) -> String {
    """
    (NOT pg_catalog.jsonb_path_exists(\(expression),
        'strict $.** ? (@.type() == "number" && (@ == 0 || @ >= 1e309 || @ <= -1e309 || (@ < 1e-400 && @ > -1e-400)))')
      OR NOT EXISTS (
        SELECT 1 FROM pg_catalog.jsonb_path_query(\(expression), 'strict $.** ? (@.type() == "number")') AS n(v)
        WHERE pg_catalog.abs(n.v::numeric) >= 1e309 OR pg_catalog.scale(n.v::numeric) > 400))
    """
  }

  /// SQL for the bytes of the `jsonb` `expression`'s text, or `NULL` when rendering it would cost
  /// out of proportion (``isMeasurable(_:)``).
  static func payloadTextBytes(_ expression: String) -> String {
    "CASE WHEN \(isMeasurable(expression)) THEN pg_catalog.octet_length((\(expression))::text) END"
  }
}
