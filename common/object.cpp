#include <photon/common/object.h>

// Out of line so the vtable and type info are emitted once, in the library.
Object::~Object() = default;
