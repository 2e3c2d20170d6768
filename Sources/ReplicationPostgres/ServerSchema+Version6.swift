extension ServerSchema {
  /// Version 6: data subjects' keys and erasures replicate through the owner's server
  /// (`Docs/Replication.md`, "Personal data").
  ///
  /// - **Events carry their data subjects** (`events.subjects`, the subjects whose sealed values
  ///   the payload holds, as the device's record lists them): `push` takes each event's
  ///   `"subjects"` (an array of at most 255 UUIDs; absent is none), and `pull_subjects` answers
  ///   `pull_chained`'s rows with them. The server's chain does not cover them (its encoding is
  ///   version 5's).
  /// - **Keys** (`eventlog.subject_keys`): one per (owner, subject), owner-isolated as events are,
  ///   reached only through `push_keys` and `pull_keys`. A key pushed again keeps the first; a
  ///   key of an erased subject is refused. Each row's `serial` is taken under the owner's turn,
  ///   so an owner's keys commit in serial order and a device pulls those after the last it saw.
  /// - **Erasures** (`eventlog.erased_subjects`): storing a `SubjectErased` event (payload
  ///   `{"subject": "<uuid>", …}`), through `push` or not, deletes the subject's key row and
  ///   records its fence in the same transaction (a trigger).
  ///
  /// Nothing of version 5 changes for older clients: `clients_from` stays 3.
  static let version6 = #"""
    ALTER TABLE eventlog.events ADD COLUMN subjects uuid[] NOT NULL DEFAULT '{}'
      CONSTRAINT events_subjects_check CHECK (pg_catalog.cardinality(subjects) <= 255);
    COMMENT ON COLUMN eventlog.events.subjects IS
      'The data subjects whose sealed values the payload holds (ascending, distinct), as the device recorded them.';

    CREATE TABLE eventlog.subject_keys (
      owner text NOT NULL,
      subject uuid NOT NULL,
      key bytea NOT NULL CHECK (pg_catalog.octet_length(key) = 32),
      created_at timestamptz NOT NULL,
      pushed_by uuid NOT NULL,
      stored_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
      serial bigint GENERATED ALWAYS AS IDENTITY,
      CONSTRAINT subject_keys_pkey PRIMARY KEY (owner, subject)
    );
    CREATE INDEX subject_keys_by_serial ON eventlog.subject_keys (owner, serial);
    COMMENT ON TABLE eventlog.subject_keys IS
      'Each owner''s data subjects'' keys, as a device pushed them first; deleted when the subject is erased.';

    CREATE TABLE eventlog.erased_subjects (
      owner text NOT NULL,
      subject uuid NOT NULL,
      erased_at timestamptz NOT NULL,
      event_id uuid NOT NULL,
      CONSTRAINT erased_subjects_pkey PRIMARY KEY (owner, subject)
    );
    COMMENT ON TABLE eventlog.erased_subjects IS
      'Each owner''s erased data subjects (fences): their keys are deleted and refused from then on. Append-only.';
    CREATE TRIGGER erased_subjects_append_only BEFORE UPDATE OR DELETE ON eventlog.erased_subjects
      FOR EACH ROW EXECUTE FUNCTION eventlog.refuse_change();
    CREATE TRIGGER erased_subjects_no_truncate BEFORE TRUNCATE ON eventlog.erased_subjects
      FOR EACH STATEMENT EXECUTE FUNCTION eventlog.refuse_change();

    ALTER TABLE eventlog.subject_keys ENABLE ROW LEVEL SECURITY;
    ALTER TABLE eventlog.subject_keys FORCE ROW LEVEL SECURITY;
    CREATE POLICY subject_keys_own ON eventlog.subject_keys FOR ALL
      USING (owner = (SELECT eventlog.current_owner())) WITH CHECK (owner = (SELECT eventlog.current_owner()));
    ALTER TABLE eventlog.erased_subjects ENABLE ROW LEVEL SECURITY;
    ALTER TABLE eventlog.erased_subjects FORCE ROW LEVEL SECURITY;
    CREATE POLICY erased_subjects_own ON eventlog.erased_subjects FOR ALL
      USING (owner = (SELECT eventlog.current_owner())) WITH CHECK (owner = (SELECT eventlog.current_owner()));

    -- An erasure stored (pushed, or by an operator's insert): the subject's key goes and its fence
    -- stays, in the transaction that stores the event. Runs as the schema's owner, held to the
    -- policies above: a push's event is the session owner's own.
    CREATE FUNCTION eventlog.apply_erasure() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    DECLARE
      v_subject uuid;
    BEGIN
      IF pg_catalog.jsonb_typeof(NEW.payload->'subject') = 'string'
        AND \#(isUUID("(NEW.payload->>'subject')")) THEN
        v_subject := (NEW.payload->>'subject')::uuid;
        DELETE FROM eventlog.subject_keys k WHERE k.owner = NEW.owner AND k.subject = v_subject;
        INSERT INTO eventlog.erased_subjects (owner, subject, erased_at, event_id)
          VALUES (NEW.owner, v_subject, NEW.recorded_at, NEW.id)
          ON CONFLICT (owner, subject) DO NOTHING;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER events_apply_erasure AFTER INSERT ON eventlog.events
      FOR EACH ROW WHEN (NEW.type = 'SubjectErased') EXECUTE FUNCTION eventlog.apply_erasure();

    -- push: version 5's, with each event's "subjects" stored.
    \#(pushWithSubjects)

    -- Keys: stored unless the owner holds one for the subject or erased it; under the owner's turn,
    -- so that an erasure pushed at the same time cannot miss a key stored beside it, and the
    -- owner's serials commit in order.
    CREATE FUNCTION eventlog.push_keys_of(p_device uuid, p_keys jsonb)
    RETURNS TABLE (subject uuid, outcome text)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' SET lock_timeout = '10s' AS $$
    #variable_conflict use_column
    DECLARE
      v_owner text := eventlog.current_owner();
    BEGIN
      IF p_device IS NULL THEN
        RAISE EXCEPTION 'p_device is required' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF pg_catalog.jsonb_typeof(p_keys) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_keys must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF pg_catalog.jsonb_array_length(p_keys) > 1000 THEN
        RAISE EXCEPTION 'a push holds at most 1000 keys' USING ERRCODE = 'program_limit_exceeded';
      END IF;
      IF EXISTS (
        SELECT 1 FROM pg_catalog.jsonb_array_elements(p_keys) x
        WHERE pg_catalog.jsonb_typeof(x.value) IS DISTINCT FROM 'object'
          OR pg_catalog.jsonb_typeof(x.value->'subject') IS DISTINCT FROM 'string'
          OR NOT \#(isUUID("(x.value->>'subject')"))
          OR pg_catalog.jsonb_typeof(x.value->'key') IS DISTINCT FROM 'string'
          OR pg_catalog.octet_length(x.value->>'key') <> 44
          OR (x.value->>'key') !~ '^[A-Za-z0-9+/]{43}=$'
          OR pg_catalog.jsonb_typeof(x.value->'createdAt') IS DISTINCT FROM 'number'
          OR (x.value->'createdAt')::numeric <> pg_catalog.trunc((x.value->'createdAt')::numeric)
          OR (x.value->'createdAt')::numeric NOT BETWEEN -62135596800000000 AND 253402300799999999
      ) THEN
        RAISE EXCEPTION 'each key must be {"subject": a UUID, "key": 32 bytes in Base64, "createdAt": microseconds since 1970}'
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
      PERFORM eventlog.lock_owner(v_owner);
      RETURN QUERY
      WITH input AS (
        SELECT DISTINCT ON ((x.value->>'subject')::uuid) (x.value->>'subject')::uuid AS subject,
          pg_catalog.decode(x.value->>'key', 'base64') AS key,
          pg_catalog.to_timestamp(0) + (x.value->>'createdAt')::bigint * interval '1 microsecond' AS created_at,
          x.ordinality AS ord
        FROM pg_catalog.jsonb_array_elements(p_keys) WITH ORDINALITY AS x(value, ordinality)
        ORDER BY (x.value->>'subject')::uuid, x.ordinality
      ),
      inserted AS (
        INSERT INTO eventlog.subject_keys AS k (owner, subject, key, created_at, pushed_by)
        SELECT v_owner, i.subject, i.key, i.created_at, p_device FROM input i
        WHERE NOT EXISTS (
          SELECT 1 FROM eventlog.erased_subjects f WHERE f.owner = v_owner AND f.subject = i.subject)
        ORDER BY i.ord
        ON CONFLICT (owner, subject) DO NOTHING
        RETURNING k.subject
      )
      SELECT i.subject,
        CASE WHEN EXISTS (SELECT 1 FROM inserted n WHERE n.subject = i.subject) THEN 'stored'
             WHEN EXISTS (
               SELECT 1 FROM eventlog.erased_subjects f WHERE f.owner = v_owner AND f.subject = i.subject)
               THEN 'erased'
             ELSE 'held' END
      FROM input i ORDER BY i.ord;
    END $$;

    CREATE FUNCTION eventlog.pull_keys_of(p_after bigint, p_limit integer)
    RETURNS TABLE (serial bigint, subject uuid, key text, created_at_us bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
      SELECT k.serial, k.subject, pg_catalog.encode(k.key, 'base64'),
        (EXTRACT(epoch FROM k.created_at) * 1000000)::bigint
      FROM eventlog.subject_keys k
      WHERE k.owner = eventlog.current_owner() AND k.serial > coalesce(p_after, 0)
      ORDER BY k.serial
      LIMIT greatest(1, least(coalesce(p_limit, 1000), 10000))
    $$;

    CREATE FUNCTION eventlog.pull_subject_events(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      pushed_by uuid, pushed_sequence bigint, stream text, type text, schema_version integer, payload text,
      metadata text, correlation_id text, causation_id text, origin text, recorded_at_us bigint, chain text,
      subjects text)
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
      SELECT c.*, (
        SELECT pg_catalog.array_to_string(e.subjects, ',') FROM eventlog.events e
        WHERE e.owner = eventlog.current_owner() AND e.position = c.event_position)
      FROM eventlog.pull_chained_events(p_after, p_after_id, p_limit, p_max_bytes, p_wait_ms) c
    $$;

    CREATE FUNCTION eventlog_api.push_keys(p_device uuid, p_keys jsonb)
    RETURNS TABLE (subject uuid, outcome text)
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '30s' SET lock_timeout = '10s' AS $$
      SELECT * FROM eventlog.push_keys_of(p_device, p_keys)
    $$;
    COMMENT ON FUNCTION eventlog_api.push_keys(uuid, jsonb) IS
      'Stores data subjects'' keys of the owner: stored, held (the server keeps the first), or erased (refused).';
    CREATE FUNCTION eventlog_api.pull_keys(p_after bigint, p_limit integer)
    RETURNS TABLE (serial bigint, subject uuid, key text, created_at_us bigint)
    LANGUAGE sql STABLE SET search_path = '' SET statement_timeout = '30s' AS $$
      SELECT * FROM eventlog.pull_keys_of(p_after, p_limit)
    $$;
    COMMENT ON FUNCTION eventlog_api.pull_keys(bigint, integer) IS
      'The owner''s data subjects'' keys stored after serial p_after, in serial order.';
    CREATE FUNCTION eventlog_api.pull_subjects(
      p_after bigint, p_after_id uuid, p_limit integer, p_max_bytes integer, p_wait_ms integer)
    RETURNS TABLE (event_position bigint, event_id uuid, origin_device uuid, origin_sequence bigint,
      pushed_by uuid, pushed_sequence bigint, stream text, type text, schema_version integer, payload text,
      metadata text, correlation_id text, causation_id text, origin text, recorded_at_us bigint, chain text,
      subjects text)
    LANGUAGE sql VOLATILE SET search_path = '' SET statement_timeout = '30s' AS $$
      SELECT * FROM eventlog.pull_subject_events(p_after, p_after_id, p_limit, p_max_bytes, p_wait_ms)
    $$;
    COMMENT ON FUNCTION eventlog_api.pull_subjects(bigint, uuid, integer, integer, integer) IS
      'pull_chained''s rows with each event''s data subjects (comma-separated UUIDs).';
    """#

  /// Version 5's `eventlog.push_events` (five arguments), replaced with one that also stores each
  /// event's `"subjects"` (refusing the event when they are not an array of at most 255 UUIDs).
  /// Derived from version 5's text, which never changes, by replacing each of its fragments
  /// below exactly once: a fragment that is no longer there stops the build's tests at once
  /// (every test that creates a server applies it).
  static let pushWithSubjects: String = {
    guard let start = version5.range(of: "CREATE FUNCTION eventlog.push_events(\n"),
      let end = version5.range(of: "-- Version 4's push (four arguments)")
    else { preconditionFailure("version 5's push_events is not where version 6 expects it") }
    var text = String(version5[start.lowerBound..<end.lowerBound])
    let subjectsArray = """
      CASE WHEN f.subjects_json IS NULL THEN '{}'::uuid[]
                WHEN pg_catalog.jsonb_typeof(f.subjects_json) = 'array'
                  AND pg_catalog.jsonb_array_length(f.subjects_json) <= 255
                  AND NOT EXISTS (
                    SELECT 1 FROM pg_catalog.jsonb_array_elements(f.subjects_json) s
                    WHERE pg_catalog.jsonb_typeof(s.value) IS DISTINCT FROM 'string'
                      OR NOT \(isUUID("(s.value #>> '{}')")))
                  THEN ARRAY(
                    SELECT DISTINCT (s.value #>> '{}')::uuid FROM pg_catalog.jsonb_array_elements(f.subjects_json) s
                    ORDER BY 1)
                END AS subjects
      """
    let replacements: [(String, String)] = [
      ("CREATE FUNCTION eventlog.push_events(\n", "CREATE OR REPLACE FUNCTION eventlog.push_events(\n"),
      (
        "THEN (r.v->'deviceSeq')::numeric END AS device_seq_number\n",
        "THEN (r.v->'deviceSeq')::numeric END AS device_seq_number,\n      r.v->'subjects' AS subjects_json\n"
      ),
      (
        "SELECT f.ord, f.v, f.stream, f.type, f.payload, f.metadata, f.has_origin,\n",
        "SELECT f.ord, f.v, f.stream, f.type, f.payload, f.metadata, f.has_origin,\n          \(subjectsArray),\n"
      ),
      (
        "WHEN t.recorded_us IS NULL THEN",
        "WHEN t.subjects IS NULL THEN 'the event''s \"subjects\" must be an array of at most 255 UUIDs'\n            WHEN t.recorded_us IS NULL THEN"
      ),
      (
        "SELECT m.ord, m.v, m.stream, m.type, m.payload, m.metadata, m.id, m.seq, m.schema_version,\n",
        "SELECT m.ord, m.v, m.stream, m.type, m.payload, m.metadata, m.id, m.seq, m.schema_version, m.subjects,\n"
      ),
      (
        "schema_version, payload, payload_text_bytes, metadata, recorded_at, chain)",
        "schema_version, payload, payload_text_bytes, metadata, recorded_at, chain, subjects)"
      ),
      (
        "interval '1 microsecond', f.chain\n", "interval '1 microsecond', f.chain, f.subjects\n"
      ),
    ]
    for (old, new) in replacements {
      let parts = text.components(separatedBy: old)
      precondition(parts.count == 2, "version 5's push_events holds \(parts.count - 1) copies of: \(old)")
      text = parts.joined(separator: new)
    }
    return text
  }()
}
