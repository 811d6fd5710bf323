// libFuzzer's entry points for scripts/fuzz.sh, compiled with swiftc directly (`swift build -sanitize=fuzzer` does not
// link under SwiftPM on Linux) together with Tests/FuzzRegressionTests/FuzzInput.swift. Not part of the package.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzInput.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Writes the seeds into `BEACONTRACKER_FUZZ_SEEDS` (a folder) when set, before fuzzing starts.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    guard let folder = ProcessInfo.processInfo.environment["BEACONTRACKER_FUZZ_SEEDS"] else { return 0 }
    for (index, seed) in FuzzInput.seeds().enumerated() {
        _ = FileManager.default.createFile(atPath: "\(folder)/seed-\(index)", contents: Data(seed))
    }
    return 0
}
