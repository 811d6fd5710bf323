// A plain C parse of HCI LE Advertising Report events, written for beacon-bench as the yardstick of the agent's
// decoding: the least any decoder must do with the same bytes. Not used by the programs.
#ifndef BENCH_PARSE_H
#define BENCH_PARSE_H

#include <stddef.h>
#include <stdint.h>

/// Walks every report of an LE (legacy) Advertising Report event given without the H4 type byte, and the AD
/// structures of each, checking every length. Counts the beacon frames: iBeacon and AltBeacon whose UUID equals
/// `uuid` (16 bytes), and Eddystone UID, URL, TLM and EID frames of the right size. Returns that count, 0 for another
/// event, -1 for an event or advertisement whose lengths do not add up.
int bench_parse_event(const uint8_t *event, size_t length, const uint8_t *uuid);

#endif
