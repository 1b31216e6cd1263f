/* A model/ file that reaches right, into engine/ and SimGrid: the layering check must refuse both. */
#include "../engine/engine.h"
#include <simgrid/actor.h>
