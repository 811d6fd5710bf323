#include "bench_parse.h"

#include <string.h>

static int beacon_frames(const uint8_t *data, size_t length, const uint8_t *uuid) {
    int frames = 0;
    size_t offset = 0;
    while (offset < length) {
        size_t structure = data[offset];
        if (structure == 0) break;
        if (offset + 1 + structure > length) return -1;
        uint8_t type = data[offset + 1];
        const uint8_t *body = data + offset + 2;
        size_t size = structure - 1;
        if (type == 0xFF && size == 25 && body[0] == 0x4C && body[1] == 0x00 && body[2] == 0x02 && body[3] == 0x15) {
            if (memcmp(body + 4, uuid, 16) == 0) frames++;
        } else if (type == 0xFF && size == 26 && body[2] == 0xBE && body[3] == 0xAC) {
            if (memcmp(body + 4, uuid, 16) == 0) frames++;
        } else if (type == 0x16 && size >= 4 && body[0] == 0xAA && body[1] == 0xFE) {
            uint8_t frame = body[2];
            // The sizes the agent's decoder takes: UID 18 or 20 bytes of frame, URL 3 to 20, TLM 14, EID 10.
            if ((frame == 0x00 && (size == 20 || size == 22)) || (frame == 0x10 && size >= 5 && size <= 22)
                || (frame == 0x20 && size == 16) || (frame == 0x30 && size == 12)) {
                frames++;
            }
        }
        offset += 1 + structure;
    }
    return frames;
}

int bench_parse_event(const uint8_t *event, size_t length, const uint8_t *uuid) {
    if (length < 4 || event[0] != 0x3E || event[2] != 0x02) return 0;
    if ((size_t)event[1] != length - 2) return -1;
    size_t count = event[3];
    size_t offset = 4;
    int frames = 0;
    for (size_t report = 0; report < count; report++) {
        // Event type 1, address type 1, address 6, data length 1, data, RSSI 1.
        if (offset + 9 > length) return -1;
        size_t data = event[offset + 8];
        if (offset + 10 + data > length) return -1;
        int found = beacon_frames(event + offset + 9, data, uuid);
        if (found < 0) return -1;
        frames += found;
        offset += 10 + data;
    }
    return offset == length ? frames : -1;
}
