/* An inputs/ file that includes cJSON, as it may, and engine/ as it may not. */
#include <cjson/cJSON.h>
#include "../engine/engine.h"
