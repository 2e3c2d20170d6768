extension ServerSchema {
  /// Version 5: the devices' chains anchored where a device's user cannot rewrite them (issue 29,
  /// `Docs/Replication.md`, "Anchoring the chain").
  ///
  /// - **Provenance through the server.** A pushed event may carry its recorded origin
  ///   (`"device"`, `"deviceSeq"`: an imported event's is another device's), which the server
  ///   stores as `origin_device` and `origin_sequence`; the pushing device and its local sequence
  ///   get columns of their own (`pushed_by`, `pushed_sequence`). Without them the origin is the
  ///   pushing device, as before. Rows stored before take their origin as the pushing device.
  /// - **The server's own chain** over each owner's positions: every row's `chain` is SHA-256 of
  ///   the row before's value and the row's canonical encoding (``rowEncoding(_:)``), 32 zero
  ///   bytes before position 1; `push` computes it at insert, in position order under the owner's
  ///   turn, a trigger for any other insert, and the upgrade for the rows stored before.
  /// - **Attested heads.** `push` takes the device's chain value at `p_through` (`p_head`), and
  ///   `eventlog.attested_heads` keeps every (owner, device, key, sequence, head) it accepted with
  ///   the owner's position and chain value at that moment, append-only. A head that contradicts
  ///   one attested before for the same sequence is recorded too (a restored device's history
  ///   legitimately differs; the server cannot tell it from a rewritten one), and
  ///   `verify --remote` reports the contradiction.
  /// - **`pull_chained`**: `pull`'s rows with what the chain covers besides (`pushed_by`,
  ///   `pushed_sequence`, the metadata's text) and each row's chain value, so that a device can
  ///   recompute the chain and record the server's head at its cursor.
  ///
  /// Older clients' functions (`push` with four arguments, `pull`) keep working, on top of the new
  /// ones: `clients_from` stays 3.
  static let version5 = #"""
    DO $$
    BEGIN
      IF pg_catalog.getdatabaseencoding() <> 'UTF8' THEN
        RAISE EXCEPTION 'eventlog schema version 5 needs a UTF8 database, not %: the server''s chain hashes text as UTF-8',
          pg_catalog.getdatabaseencoding() USING ERRCODE = 'feature_not_supported';
      END IF;
    END $$;

    CREATE OR REPLACE FUNCTION eventlog.refuse_change() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
    BEGIN
      RAISE EXCEPTION 'eventlog.% is append-only: % is refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'A row is never changed or removed; append a new one instead.';
    END $$;

    -- One step of the chain: SHA-256 of the value before (the previous row's, or p_previous for a
    -- run's first row) and the row's encoding; as an aggregate, the running value of a run.
    CREATE FUNCTION eventlog.chain_step(p_state bytea, p_previous bytea, p_row bytea) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = '' AS $$
      SELECT pg_catalog.sha256(pg_catalog.byteacat(coalesce(p_state, p_previous), p_row))
    $$;
    CREATE AGGREGATE eventlog.chain(bytea, bytea) (SFUNC = eventlog.chain_step, STYPE = bytea);
    COMMENT ON AGGREGATE eventlog.chain(bytea, bytea) IS
      'The server''s chain over rows in order: chain(previous value, row encoding) OVER (ORDER BY position).';

    ALTER TABLE eventlog.events ADD COLUMN pushed_by uuid, ADD COLUMN pushed_sequence bigint,
      ADD COLUMN chain bytea;
    COMMENT ON COLUMN eventlog.events.origin_device IS
      'The device that first recorded the event (from version 5 as the pushing device says; before, the pushing device).';
    COMMENT ON COLUMN eventlog.events.pushed_by IS 'The device that pushed the event.';
    COMMENT ON COLUMN eventlog.events.pushed_sequence IS 'The event''s sequence in the pushing device''s log.';
    COMMENT ON COLUMN eventlog.events.chain IS
      'SHA-256 of the owner''s previous row''s chain (32 zero bytes before position 1) and this row''s encoding (Docs/Replication.md).';

    -- The rows stored before: pushed by their origin, chained once in position order. The
    -- append-only trigger and the bounds (a NOT VALID constraint still holds for an UPDATE) are
    -- set aside meanwhile, as version 4 did.
    ALTER TABLE eventlog.events DROP CONSTRAINT events_bounded;
    ALTER TABLE eventlog.events DISABLE TRIGGER events_append_only;
    UPDATE eventlog.events e SET pushed_by = e.origin_device, pushed_sequence = e.origin_sequence, chain = c.chain
    FROM (
      SELECT x.owner, x.position,
        eventlog.chain(\#(genesis), \#(storedRowEncoding(
          "x", pushedBy: "x.origin_device", pushedSequence: "x.origin_sequence", metadataText: "x.metadata_text",
          payloadText: "x.payload_text")))
          OVER (PARTITION BY x.owner ORDER BY x.position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS chain
      FROM (
        SELECT r.*, r.metadata::text AS metadata_text,
          CASE WHEN \#(servable("r")) THEN r.payload::text END AS payload_text
        FROM eventlog.events r
      ) x
    ) c
    WHERE e.owner = c.owner AND e.position = c.position;
    ALTER TABLE eventlog.events ENABLE TRIGGER events_append_only;
    ALTER TABLE eventlog.events ALTER COLUMN pushed_by SET NOT NULL, ALTER COLUMN pushed_sequence SET NOT NULL,
      ALTER COLUMN chain SET NOT NULL,
      ADD CONSTRAINT events_pushed_sequence_check CHECK (pushed_sequence > 0),
      ADD CONSTRAINT events_chain_check CHECK (pg_catalog.octet_length(chain) = 32);
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

    -- A row inserted without its chain (an operator's: push gives it) is chained after the row
    -- before it, which an earlier row of the same statement may be; its pushing device is its
    -- origin when not given. Fires after events_measure_payload (triggers fire in name order).
    CREATE FUNCTION eventlog.chain_row() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SET search_path = '' AS $$
    DECLARE
      v_previous bytea;
      v_metadata text;
      v_payload text;
    BEGIN
      NEW.pushed_by := coalesce(NEW.pushed_by, NEW.origin_device);
      NEW.pushed_sequence := coalesce(NEW.pushed_sequence, NEW.origin_sequence);
      IF NEW.chain IS NULL THEN
        SELECT e.chain INTO v_previous FROM eventlog.events e
          WHERE e.owner = NEW.owner AND e.position = NEW.position - 1;
        v_metadata := NEW.metadata::text;
        v_payload := CASE WHEN \#(servable("NEW")) THEN NEW.payload::text END;
        NEW.chain := eventlog.chain_step(NULL, coalesce(v_previous, \#(genesis)),
          \#(storedRowEncoding(
            "NEW", pushedBy: "NEW.pushed_by", pushedSequence: "NEW.pushed_sequence", metadataText: "v_metadata",
            payloadText: "v_payload")));
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER events_set_chain BEFORE INSERT ON eventlog.events
      FOR EACH ROW WHEN (NEW.chain IS NULL OR NEW.pushed_by IS NULL OR NEW.pushed_sequence IS NULL)
      EXECUTE FUNCTION eventlog.chain_row();

    -- The heads devices attested: append-only, one row per (owner, device, key, sequence, head).
    CREATE TABLE eventlog.attested_heads (
      attestation bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      owner text NOT NULL,
      device uuid NOT NULL,
      key_hash bytea NOT NULL CHECK (pg_catalog.octet_length(key_hash) = 32),
      sequence bigint NOT NULL CHECK (sequence > 0),
      head bytea NOT NULL CHECK (pg_catalog.octet_length(head) = 32),
      server_position bigint NOT NULL CHECK (server_position >= 0),
      server_head bytea NOT NULL CHECK (pg_catalog.octet_length(server_head) = 32),
      attested_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
      CONSTRAINT attested_heads_once UNIQUE (owner, device, key_hash, sequence, head)
    );
    CREATE INDEX attested_heads_by_device ON eventlog.attested_heads (owner, device, attestation);
    COMMENT ON TABLE eventlog.attested_heads IS
      'Every chain head a device attested with a push (its chain value at the push''s p_through), with the owner''s position and chain value when it was accepted. Append-only.';
    ALTER TABLE eventlog.attested_heads ENABLE ROW LEVEL SECURITY;
    CREATE POLICY attested_heads_own ON eventlog.attested_heads FOR SELECT
      USING (owner = (SELECT eventlog.current_owner()));
    CREATE TRIGGER attested_heads_append_only BEFORE UPDATE OR DELETE ON eventlog.attested_heads
      FOR EACH ROW EXECUTE FUNCTION eventlog.refuse_change();
    CREATE TRIGGER attested_heads_no_truncate BEFORE TRUNCATE ON eventlog.attested_heads
      FOR EACH STATEMENT EXECUTE FUNCTION eventlog.refuse_change();

    -- push: version 4's, with each event's origin as the device recorded it, the server's chain,
    -- and the device's head at p_through attested.
    CREATE FUNCTION eventlog.push_events(
      p_device uuid, p_device_key text, p_through bigint, p_events jsonb, p_head text)
    RETURNS TABLE (event_id uuid, event_position bigint, outcome text, reason text)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' SET lock_timeout = '10s' AS $$
    DECLARE
      v_owner text := eventlog.current_owner();
      v_head bigint;
      v_previous bytea;
      v_row record;
      v_last_sequence bigint;
      v_last_id uuid;
      v_prefixes text[];
      v_key_hash bytea;
      v_position bigint;
      v_server_head bytea;
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
      IF p_head IS NOT NULL AND (p_through < 1 OR pg_catalog.octet_length(p_head) <> 64 OR p_head ~ '[^0-9a-f]') THEN
        RAISE EXCEPTION 'p_head must be 64 lower-case hexadecimal digits (the device''s chain value at p_through, 1 or more)'
          USING ERRCODE = 'invalid_parameter_value';
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
      v_key_hash := pg_catalog.sha256(pg_catalog.convert_to(p_device_key, 'UTF8'));
      -- Pushes of one owner take turns from here to their commit: positions commit in order, and
      -- each push chains on from the value its turn found at the owner's last position.
      PERFORM eventlog.lock_owner(v_owner);
      v_head := eventlog.owner_head(v_owner);
      SELECT e.chain INTO v_previous FROM eventlog.events e WHERE e.owner = v_owner AND e.position = v_head;
      v_previous := coalesce(v_previous, \#(genesis));
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
            THEN (r.v->'recordedAt')::numeric END AS recorded_number,
          r.v ? 'device' OR r.v ? 'deviceSeq' AS has_origin,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'device') = 'string' THEN r.v->>'device' END AS device_text,
          CASE WHEN pg_catalog.jsonb_typeof(r.v->'deviceSeq') = 'number'
            THEN (r.v->'deviceSeq')::numeric END AS device_seq_number
        FROM raw r
      ),
      typed AS MATERIALIZED (
        SELECT f.ord, f.v, f.stream, f.type, f.payload, f.metadata, f.has_origin,
          CASE WHEN \#(isUUID("f.id_text")) THEN f.id_text::uuid END AS id,
          CASE WHEN f.seq_number = pg_catalog.trunc(f.seq_number) AND f.seq_number BETWEEN 1 AND 9223372036854775807
            THEN f.seq_number::bigint END AS seq,
          CASE WHEN f.version_number = pg_catalog.trunc(f.version_number) AND f.version_number BETWEEN 0 AND 65535
            THEN f.version_number::integer END AS schema_version,
          CASE WHEN f.recorded_number = pg_catalog.trunc(f.recorded_number)
            AND f.recorded_number BETWEEN -62135596800000000 AND 253402300799999999
            THEN f.recorded_number::bigint END AS recorded_us,
          CASE WHEN \#(isUUID("f.device_text")) AND f.device_text <> '00000000-0000-0000-0000-000000000000'
            THEN f.device_text::uuid END AS origin_device,
          CASE WHEN f.device_seq_number = pg_catalog.trunc(f.device_seq_number)
            AND f.device_seq_number BETWEEN 1 AND 9223372036854775807
            THEN f.device_seq_number::bigint END AS origin_sequence
        FROM fields f
      ),
      screened AS MATERIALIZED (
        SELECT t.*,
          CASE
            WHEN pg_catalog.jsonb_typeof(t.v) IS DISTINCT FROM 'object' THEN 'an event must be a JSON object'
            WHEN t.id IS NULL THEN 'the event has no valid "id" (a UUID)'
            WHEN t.seq IS NULL THEN 'the event has no valid "seq" (a local sequence, 1 or more)'
            WHEN t.has_origin AND (t.origin_device IS NULL OR t.origin_sequence IS NULL)
              THEN 'the event has no valid origin: "device" (a UUID, not all zeros) and "deviceSeq" (1 or more) go together'
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
      -- Only a payload that passed every check is rendered, and only once: its text is what pulls
      -- budget by and what the chain covers.
      measured AS MATERIALIZED (
        SELECT s.*, CASE WHEN s.problem IS NULL THEN s.payload::text END AS payload_text
        FROM screened s
      ),
      checked AS (
        SELECT m.ord, m.v, m.stream, m.type, m.payload, m.metadata, m.id, m.seq, m.schema_version,
          m.recorded_us, m.payload_text, pg_catalog.octet_length(m.payload_text) AS text_bytes,
          m.metadata::text AS metadata_text,
          coalesce(m.origin_device, p_device) AS origin_device, coalesce(m.origin_sequence, m.seq) AS origin_sequence,
          coalesce(m.problem,
            CASE WHEN pg_catalog.octet_length(m.payload_text) > 4194304
              THEN 'the event''s payload is over 4 MiB as JSON text' END) AS problem
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
      -- The chain runs on from the owner's last row, in position order.
      chained AS (
        SELECT f.*,
          eventlog.chain(v_previous, \#(rowEncoding(
            position: "v_head + f.n", id: "f.id", owner: "v_owner", originDevice: "f.origin_device",
            originSequence: "f.origin_sequence", pushedBy: "p_device", pushedSequence: "f.seq", stream: "f.stream",
            type: "f.type", schemaVersion: "f.schema_version", recordedMicroseconds: "f.recorded_us",
            metadataText: "f.metadata_text", payloadText: "f.payload_text")))
            OVER (ORDER BY f.n ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS chain
        FROM fresh f
      ),
      inserted AS (
        INSERT INTO eventlog.events AS ev
          (owner, position, id, origin_device, origin_sequence, pushed_by, pushed_sequence, stream, type,
           schema_version, payload, payload_text_bytes, metadata, recorded_at, chain)
        SELECT v_owner, v_head + f.n, f.id, f.origin_device, f.origin_sequence, p_device, f.seq, f.stream, f.type,
          f.schema_version, f.payload, f.text_bytes, f.metadata,
          pg_catalog.to_timestamp(0) + f.recorded_us * interval '1 microsecond', f.chain
        FROM chained f ORDER BY f.n
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
        VALUES (v_owner, p_device, v_key_hash, p_through, v_last_sequence, v_last_id)
        ON CONFLICT (owner, device, key_hash) DO UPDATE
        SET pushed_through = excluded.pushed_through,
          last_sequence = coalesce(excluded.last_sequence, d.last_sequence),
          last_id = CASE WHEN excluded.last_sequence IS NULL THEN d.last_id ELSE excluded.last_id END,
          updated_at = pg_catalog.now();
      v_position := eventlog.owner_head(v_owner);
      IF p_head IS NOT NULL THEN
        SELECT e.chain INTO v_server_head FROM eventlog.events e WHERE e.owner = v_owner AND e.position = v_position;
        INSERT INTO eventlog.attested_heads (owner, device, key_hash, sequence, head, server_position, server_head)
          VALUES (v_owner, p_device, v_key_hash, p_through, pg_catalog.decode(p_head, 'hex'), v_position,
            coalesce(v_server_head, \#(genesis)))
          ON CONFLICT (owner, device, key_hash, sequence, head) DO NOTHING;
      END IF;
      IF v_position > v_head THEN
        PERFORM pg_catalog.pg_notify(eventlog.owner_channel(v_owner), '');
      END IF;
    END $$;

    -- Version 4's push (four arguments), for older clients: the same, without a head.
    CREATE OR REPLACE FUNCTION eventlog.push_events(p_device uuid, p_device_key text, p_through bigint, p_events jsonb)
    RETURNS TABLE (event_id uuid, event_position bigint, outcome text, reason text)
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
      SELECT * FROM eventlog.push_events(p_device, p_device_key, p_through, p_events, NULL::text)
    $$;

    -- pull with what the chain covers: version 4's pull, with pushed_by, pushed_sequence, the
    -- metadata's text and each row's chain value (hexadecimal).
    CREATE FUNCTION eventlog.pull_chained_events(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      pushed_by uuid, pushed_sequence bigint, stream text, type text, schema_version integer, payload text,
      metadata text, correlation_id text, causation_id text, origin text, recorded_at_us bigint, chain text)
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
        IF NOT v_waiting THEN
          v_waiting := eventlog.take_wait_slot(v_owner);
          EXIT WHEN NOT v_waiting;
        END IF;
        PERFORM pg_catalog.pg_sleep(0.1);
      END LOOP;
      RETURN QUERY
      SELECT s.position, s.id, s.origin_device, s.origin_sequence, s.pushed_by, s.pushed_sequence, s.stream,
        s.type, s.schema_version,
        CASE WHEN s.servable THEN s.payload::text END,
        s.metadata::text,
        CASE WHEN pg_catalog.jsonb_typeof(s.metadata->'correlationID') = 'string'
          THEN s.metadata->>'correlationID' END,
        CASE WHEN pg_catalog.jsonb_typeof(s.metadata->'causationID') = 'string' THEN s.metadata->>'causationID' END,
        CASE WHEN pg_catalog.jsonb_typeof(s.metadata->'origin') = 'string' THEN s.metadata->>'origin' END,
        \#(recordedMicroseconds("s.recorded_at")),
        pg_catalog.encode(s.chain, 'hex')
      FROM (
        SELECT c.*, sum(c.cost) OVER (ORDER BY c.position) AS running
        FROM (
          SELECT e.position, e.id, e.origin_device, e.origin_sequence, e.pushed_by, e.pushed_sequence, e.stream,
            e.type, e.schema_version, e.payload, e.metadata, e.recorded_at, e.chain,
            \#(servable("e")) AS servable,
            CASE WHEN \#(servable("e")) THEN e.payload_text_bytes ELSE 0 END AS cost
          FROM eventlog.events e
          WHERE e.owner = v_owner AND e.position > p_after AND e.position <= p_after + v_limit
        ) c
      ) s
      WHERE s.running - s.cost < v_max_bytes
      ORDER BY s.position;
    END $$;

    -- Version 4's pull, for older clients and long polls: the same rows, its columns.
    CREATE OR REPLACE FUNCTION eventlog.pull_events(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      stream text, type text, schema_version integer, payload text, correlation_id text, causation_id text,
      origin text, recorded_at_us bigint)
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
      SELECT c.event_position, c.event_id, c.origin_device, c.origin_sequence, c.stream, c.type, c.schema_version,
        c.payload, c.correlation_id, c.causation_id, c.origin, c.recorded_at_us
      FROM eventlog.pull_chained_events(p_after, p_after_id, p_limit, p_max_bytes, p_wait_ms) c
    $$;

    CREATE FUNCTION eventlog.attested_heads_of(p_device uuid, p_after bigint, p_limit integer)
    RETURNS TABLE (attestation bigint, sequence bigint, head text, key_hash text, server_position bigint,
      server_head text, attested_at_us bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
      SELECT a.attestation, a.sequence, pg_catalog.encode(a.head, 'hex'), pg_catalog.encode(a.key_hash, 'hex'),
        a.server_position, pg_catalog.encode(a.server_head, 'hex'),
        (EXTRACT(epoch FROM a.attested_at) * 1000000)::bigint
      FROM eventlog.attested_heads a
      WHERE a.owner = eventlog.current_owner() AND a.device = p_device AND a.attestation > coalesce(p_after, 0)
      ORDER BY a.attestation
      LIMIT greatest(1, least(coalesce(p_limit, 1000), 10000))
    $$;

    CREATE FUNCTION eventlog_api.push(
      p_device uuid, p_device_key text, p_through bigint, p_events jsonb, p_head text)
    RETURNS TABLE (event_id uuid, event_position bigint, outcome text, reason text)
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '30s' SET lock_timeout = '10s' AS $$
      SELECT * FROM eventlog.push_events(p_device, p_device_key, p_through, p_events, p_head)
    $$;
    COMMENT ON FUNCTION eventlog_api.push(uuid, text, bigint, jsonb, text) IS
      'Appends a device''s events after the owner''s last position, each checked on its own, sets the device''s mark, and records p_head, the device''s chain value at p_through.';
    CREATE FUNCTION eventlog_api.pull_chained(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      pushed_by uuid, pushed_sequence bigint, stream text, type text, schema_version integer, payload text,
      metadata text, correlation_id text, causation_id text, origin text, recorded_at_us bigint, chain text)
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '30s' AS $$
      SELECT * FROM eventlog.pull_chained_events(p_after, p_after_id, p_limit, p_max_bytes, p_wait_ms)
    $$;
    COMMENT ON FUNCTION eventlog_api.pull_chained(bigint, uuid, integer, integer, integer) IS
      'pull''s rows with what the server''s chain covers besides, and each row''s chain value.';
    CREATE FUNCTION eventlog_api.attested_heads(p_device uuid, p_after bigint, p_limit integer)
    RETURNS TABLE (attestation bigint, sequence bigint, head text, key_hash text, server_position bigint,
      server_head text, attested_at_us bigint)
    LANGUAGE sql STABLE SET search_path = '' SET statement_timeout = '10s' AS $$
      SELECT * FROM eventlog.attested_heads_of(p_device, p_after, p_limit)
    $$;
    COMMENT ON FUNCTION eventlog_api.attested_heads(uuid, bigint, integer) IS
      'The heads the server accepted for a device of the owner, in the order it accepted them.';
    """#

  /// SQL counting the rows of `eventlog.events` whose stored chain value is not the one their
  /// rows give, each owner's chained from 32 zero bytes in position order (`breaks`: 0 on a
  /// server whose rows and chain nobody changed): for tests and the benchmark's checks.
  package static let chainBreaksSQL = """
    SELECT count(*) AS breaks FROM (
      SELECT x.chain, eventlog.chain(\(genesis), \(storedRowEncoding(
        "x", pushedBy: "x.pushed_by", pushedSequence: "x.pushed_sequence", metadataText: "x.metadata_text",
        payloadText: "x.payload_text")))
        OVER (PARTITION BY x.owner ORDER BY x.position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS recomputed
      FROM (
        SELECT r.*, r.metadata::text AS metadata_text,
          CASE WHEN \(servable("r")) THEN r.payload::text END AS payload_text
        FROM eventlog.events r
      ) x
    ) c
    WHERE c.chain IS DISTINCT FROM c.recomputed
    """

  /// The chain's value before an owner's first row: 32 zero bytes.
  package static let genesis = "'\\x0000000000000000000000000000000000000000000000000000000000000000'::bytea"

  /// SQL for the microseconds since 1970 of the `timestamptz` `column`, or `NULL` outside the years
  /// 1 to 9999 (what `pull` sends).
  static func recordedMicroseconds(_ column: String) -> String {
    """
    CASE WHEN pg_catalog.isfinite(\(column)) AND \(column) >= '0001-01-01 00:00:00+00'
      AND \(column) < '10000-01-01 00:00:00+00'
      THEN (EXTRACT(epoch FROM \(column)) * 1000000)::bigint END
    """
  }

  /// SQL that is true when `pull` sends the payload of the row `alias`: its text was measured and
  /// is at most what a device takes (8 MiB).
  static func servable(_ alias: String) -> String {
    "coalesce(\(alias).payload_text_bytes <= 8388608, false)"
  }

  /// SQL for a text's part of a row's encoding: its UTF-8 length (4 bytes, big-endian), then its
  /// bytes. `NULL` (a payload no pull sends) is the length -1 (`ff ff ff ff`) and nothing after it.
  static func encodedText(_ expression: String) -> String {
    "coalesce(pg_catalog.int4send(pg_catalog.octet_length(\(expression))) || pg_catalog.convert_to(\(expression), 'UTF8'), '\\xffffffff'::bytea)"
  }

  /// SQL for the canonical encoding of a row, which its chain value covers (`Docs/Replication.md`,
  /// "The server's chain"): each argument is the SQL of one column. Integers are big-endian
  /// (`int8send`, `int4send`), UUIDs their 16 bytes (`uuid_send`), texts ``encodedText(_:)``; a
  /// time outside the years 1 to 9999 (`NULL`) is the smallest 64-bit integer.
  static func rowEncoding(
    position: String, id: String, owner: String, originDevice: String, originSequence: String,
    pushedBy: String, pushedSequence: String, stream: String, type: String, schemaVersion: String,
    recordedMicroseconds: String, metadataText: String, payloadText: String
  ) -> String {
    [
      "pg_catalog.int8send(\(position))", "pg_catalog.uuid_send(\(id))", encodedText(owner),
      "pg_catalog.uuid_send(\(originDevice))", "pg_catalog.int8send(\(originSequence))",
      "pg_catalog.uuid_send(\(pushedBy))", "pg_catalog.int8send(\(pushedSequence))", encodedText(stream),
      encodedText(type), "pg_catalog.int4send(\(schemaVersion))",
      "pg_catalog.int8send(coalesce(\(recordedMicroseconds), -9223372036854775808))",
      encodedText(metadataText),
      encodedText(payloadText),
    ].joined(separator: " || ")
  }

  /// SQL for the encoding of the stored row `alias`, with the SQL of its pushing device and
  /// sequence, of its metadata's text and of its payload's text (`NULL` when pulls do not send it),
  /// each rendered once beforehand.
  package static func storedRowEncoding(
    _ alias: String, pushedBy: String, pushedSequence: String, metadataText: String, payloadText: String
  ) -> String {
    rowEncoding(
      position: "\(alias).position", id: "\(alias).id", owner: "\(alias).owner",
      originDevice: "\(alias).origin_device", originSequence: "\(alias).origin_sequence", pushedBy: pushedBy,
      pushedSequence: pushedSequence, stream: "\(alias).stream", type: "\(alias).type",
      schemaVersion: "\(alias).schema_version",
      recordedMicroseconds: "(\(recordedMicroseconds("\(alias).recorded_at")))", metadataText: metadataText,
      payloadText: payloadText)
  }
}
