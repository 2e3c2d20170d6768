import Foundation

/// The child side: prepares one fixture, or measures one (workload, system, size).
enum ChildMain {
  /// Runs the request and returns the JSON report line.
  static func run(_ request: ChildRequest) async throws -> ChildReport {
    FixtureIDs.version = request.ids
    BenchmarkServer.endpoint = request.server
    let system = Systems.make(request.system)
    switch request.mode {
    case .prepare:
      guard let fixture = request.fixture else { preconditionFailure("prepare needs a fixture path") }
      let start = ContinuousClock.now
      try await system.prepareFixture(request.workload, size: request.size, at: fixture)
      return ChildReport(
        operations: request.size, seconds: [(ContinuousClock.now - start).seconds], peakRSSBytes: 0,
        cpuSeconds: [], peakAnonBytes: 0, check: "prepared", storeBytes: FileSystem.size(of: fixture))
    case .measure:
      return try await measure(system, request)
    }
  }

  private static func measure(
    _ system: any BenchmarkSystem, _ request: ChildRequest
  ) async throws -> ChildReport {
    var seconds: [Double] = []
    var cpuSeconds: [Double] = []
    var externalSeconds: [Double] = []
    var operations = 0
    var check = ""
    var storeBytes = 0
    var peakAnon = 0
    for index in 0..<(request.warmups + request.runs) {
      let measured = index >= request.warmups
      let directory = request.directory + "/run-\(index)"
      FileSystem.remove(directory)
      try FileSystem.createDirectory(directory)
      do {
        let run = try await system.makeRun(
          request.workload, size: request.size, batchSize: request.batchSize, fixture: request.fixture,
          directory: directory)
        if index == request.warmups { MemoryProbe.resetPeak() }
        let sampler = measured ? AnonymousMemorySampler() : nil
        let externalStart = run.externalCPUSeconds?() ?? 0
        let cpuStart = CPUTime.process()
        let start = ContinuousClock.now
        try await run.body()
        let elapsed = ContinuousClock.now - start
        // The whole process's CPU time (every thread the run used: a replay's reader, a writer
        // queue, eight appenders), less the memory sampler's own, plus that of the processes
        // working for the run (the PostgreSQL backends of the replicate workloads).
        var cpu = (CPUTime.process() - cpuStart).total
        let external = run.externalCPUSeconds.map { max(0, $0() - externalStart) }
        cpu += external ?? 0
        if let sampler {
          let (peak, samplerCPU) = sampler.stop()
          peakAnon = max(peakAnon, peak)
          cpu = max(0, cpu - samplerCPU)
        }
        check = try run.finish()
        operations = run.operations
        if measured {
          seconds.append(elapsed.seconds)
          cpuSeconds.append(cpu)
          if let external { externalSeconds.append(external) }
        }
      }
      storeBytes = FileSystem.size(
        of: request.workload.readsFixtureInPlace(request.system) ? request.fixture ?? directory : directory)
      FileSystem.remove(directory)
    }
    return ChildReport(
      operations: operations, seconds: seconds, peakRSSBytes: MemoryProbe.peakResidentBytes(),
      cpuSeconds: cpuSeconds, peakAnonBytes: peakAnon, check: check, storeBytes: storeBytes,
      externalCPUSeconds: externalSeconds.isEmpty ? nil : externalSeconds)
  }
}

extension Duration {
  var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}
