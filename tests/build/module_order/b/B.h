// Module b of the module-order fixture: it uses nothing.
#pragma once
