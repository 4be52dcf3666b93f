// polygrad.h included from C++: the declarations have C linkage and link against libpolygrad.
#include <polygrad/polygrad.h>

#include <cstdio>
#include <cstring>

int main() {
  pg_tensor_t t = nullptr;
  pg_api_status s = pg_tensor_neg(nullptr, &t);
  bool ok = s == PG_API_ERR_INVALID_ARGUMENT && t == nullptr &&
            std::strstr(pg_last_error(), "pg_tensor_neg") != nullptr;
  std::printf("%s\n", ok ? "ok" : pg_last_error());
  return ok ? 0 : 1;
}
