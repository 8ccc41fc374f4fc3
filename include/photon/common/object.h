// Root of photon's polymorphic interfaces (IStream, IFile, ...): gives them a virtual destructor
// so `delete` through any interface pointer is correct. No state, never yields.
#pragma once

class Object {
public:
    virtual ~Object();
};
