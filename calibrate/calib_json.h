/*
 * calib_json.h - writes a Calibration as the JSON that inputs/calibration.c reads.
 *
 * The key names come from inputs/calibration.h's tables, and every double is written so that
 * it reads back identically: calibration_load(calib_json_save(c)) == c. Sections that are
 * absent (is_present false, empty strings) are left out.
 */
#ifndef ZEROSIM_CALIBRATE_CALIB_JSON_H
#define ZEROSIM_CALIBRATE_CALIB_JSON_H

#include "common/err.h"
#include "inputs/calibration.h"

#include <stdio.h>

/* Writes c as pretty-printed JSON to out. */
void calib_json_write(const Calibration *c, FILE *out);

/* Writes c to path; fails with the path and the system's reason. */
int calib_json_save(const Calibration *c, const char *path, Err *err);

#endif
