mod services;
